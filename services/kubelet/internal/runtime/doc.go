// Package runtime is the kubelet's view of its container runtime: one
// narrow interface, Runtime, shaped like the CRI (pod sandboxes,
// containers, images, exec, port-forward), owned here and implemented by
// package cri over a CRI runtime's gRPC socket. The runtime attaches a
// sandbox to the pod network when it runs it and reports its IPs; the
// kubelet never calls CNI. Fake, beside it, keeps everything in memory
// (its pod network too) for unit tests of the pod workers, the status
// computation and the probes.
//
// Everything the kubelet needs to rebuild its state after a restart is on
// the runtime's objects themselves: the labels and annotations in
// labels.go carry the pod (uid, name, namespace), the container name, its
// spec's hash and the restart attempt.
package runtime
