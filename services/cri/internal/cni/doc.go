// Package cni attaches pod sandboxes to the node's pod network with libcni:
// the first network configuration in the CNI config directory (a bridge +
// host-local + portmap conflist on podline nodes) attaches each sandbox's
// network namespace as eth0, and the loopback plugin brings up its lo. A
// configuration may be a template holding ${POD_CIDR}, filled with the pod
// CIDR the kubelet gives through UpdateRuntimeConfig (or a flag) before
// use; a rendered one is used as is. Results are cached by libcni in its
// cache directory, so a DEL after a restart of the runtime releases the
// same addresses the ADD took.
//
// This is the runtime's half of the chain the seed draws: the kubelet
// asks for a sandbox over CRI, and the runtime, not the kubelet, runs
// CNI ADD while it creates it.
package cni
