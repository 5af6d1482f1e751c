// Package cni implements network.Network with libcni: the first network
// configuration in the CNI config directory (a bridge + host-local
// conflist on podline nodes) attaches each sandbox as eth0, and the
// loopback plugin brings up its lo. A configuration may be a template
// holding ${POD_CIDR}, filled with the node's pod CIDR (a flag or the
// Node's spec.podCIDR) before use; a rendered one is used as is. Results
// are cached by libcni in its cache directory, so a DEL after a kubelet
// restart releases the same addresses the ADD took.
package cni
