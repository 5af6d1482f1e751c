// Package nodestatus registers the kubelet's Node and keeps it current:
// BuildStatus (pure) derives the status from the machine and the runtime
// (capacity and allocatable, the conditions Ready, MemoryPressure,
// DiskPressure and PIDPressure with stable transition times, addresses,
// the kubelet's endpoint, system info and the images present, which
// ImageLocality scores); Controller creates the Node with its taints and
// pod CIDR, writes its status when it changes or every report period (a
// minute), and renews the node's Lease in kube-node-lease every 10 s.
// Machine reads capacity from the cgroup limits of the kubelet's own
// container (so a node container with --cpus and --memory reports those)
// or the host, and flags may override it.
package nodestatus
