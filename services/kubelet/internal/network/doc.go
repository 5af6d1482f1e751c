// Package network is the kubelet's view of pod networking: one narrow
// interface, Network, with SetUpPod (CNI ADD) giving a sandbox's network
// namespace its IPs and TearDownPod (CNI DEL) releasing them. Package cni
// implements it with libcni and the plugins on the node (bridge +
// host-local); Fake, beside it, hands out addresses from a subnet in
// memory for unit tests.
package network
