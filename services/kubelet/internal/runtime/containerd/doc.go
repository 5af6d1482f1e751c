// Package containerd implements the kubelet's runtime.Runtime with
// containerd's Go client, in the k8s.io namespace, without containerd's
// CRI plugin: a sandbox is a pause container holding a network namespace
// pinned under the netns directory (and the IPC and UTS namespaces its
// containers join); a container is a containerd container with a snapshot
// of its image, a task whose stdout and stderr go to a log file, and the
// labels of runtime/labels.go. A process's start, exit code and end are
// written to its container's labels and its task deleted, so what the
// kubelet reports survives restarts of the kubelet and of containerd.
// Every spec carries the sandbox's ID under CRI's annotation names
// (annotations.go), which the runc shim groups tasks by: a pod runs under
// one containerd-shim-runc-v2 process, started with its pause container
// and gone once the pod's last task is deleted.
//
// Images are pulled with a resolver that reads registry hosts from
// /etc/containerd/certs.d (hosts.toml), which is how registry.podline:5000
// is reached: over TLS, its certificate verified with the CA file its
// hosts.toml names (`ca`, the cluster CA) besides the system's roots.
package containerd
