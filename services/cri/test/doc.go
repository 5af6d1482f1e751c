// Package test runs podline-cri against a real containerd: the test binary
// re-executes itself in a network namespace of its own (so the CNI bridge,
// the pods' addresses and the streaming server stay off the machine's
// network), starts bin/containerd there with a fresh root, imports a pause
// image and a busybox image it builds from Debian's busybox-static, and
// drives the CRI over its unix socket as crictl would. Without root, runc,
// bin/containerd or the CNI plugins the tests skip and say what is missing
// (make cri-test-deps installs it).
package test
