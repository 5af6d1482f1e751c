// Package test holds the kubelet's integration tests.
//
// kubelet_test.go, staticpods_test.go and spans_test.go run the kubelet
// in-process against a real apiserver (apiservertest) on the in-memory
// runtime. The TestContainerd* tests run the kubelet binary over CRI
// against the CRI plugin of a real containerd the test starts
// (bin/containerd with a temporary root, state and socket; Debian's runc;
// the CNI plugins in /usr/lib/cni), containerd and kubelet both inside a
// network namespace the test creates as the node, so pods get addresses
// from containerd's CNI calls on a bridge that exists only there and the
// test reaches them from that namespace. podline-cri takes the same
// --container-runtime-endpoint. They skip, saying what is
// missing, where that cannot run (not root, no runc, no bin/containerd,
// no CNI plugins). Their images come from `docker save` of podline's
// images when docker has them, else are built here (pause, web, and a
// tiny tool for exec); bench_test.go measures pod startup latency and
// the kubelet's memory on the same setup (make bench-kubelet).
//
// Environment: KUBELET_TEST_LOG=1 prints kubelet logs, KUBELET_TEST_KEEP=1
// keeps containerd's directory, KUBELET_TEST_BUILD_IMAGES=1 builds the
// images even when docker has them, KUBELET_NODE_IMAGE_TEST=1 also runs
// the kubelet inside podline/node:dev with docker.
package test
