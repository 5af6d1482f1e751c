// Package runtime is the kubelet's view of its container runtime: one
// narrow interface, Runtime, shaped like the CRI the real kubelet speaks
// (pod sandboxes, containers, images, exec), owned here and implemented
// by package containerd against containerd's Go client. Fake, beside it,
// keeps everything in memory for unit tests of the pod workers, the
// status computation and the probes.
//
// Everything the kubelet needs to rebuild its state after a restart is on
// the runtime's objects themselves: the labels in labels.go carry the pod
// (uid, name, namespace), the container name, the restart attempt and the
// sandbox's network namespace and IPs.
package runtime
