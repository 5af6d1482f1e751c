// Package test holds the kubelet's integration tests.
//
// Tests in kubelet_test.go and staticpods_test.go run the kubelet
// in-process against a real apiserver (apiservertest) with the in-memory
// runtime and network. Tests in containerd_test.go run the kubelet binary
// against a real containerd started by the test (bin/containerd, Debian's
// runc, the CNI plugins in /usr/lib/cni) inside a network namespace the
// test creates, so pods get addresses on a bridge that exists only there;
// they skip, saying why, where that cannot run (not root, no runc, no
// bin/containerd, no CNI plugins). bench_test.go measures pod startup
// latency and the kubelet's memory on the same setup (make bench-kubelet).
package test
