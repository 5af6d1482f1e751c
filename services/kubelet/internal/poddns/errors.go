package poddns

import "errors"

// ErrNoClusterDNS: the pod asks for cluster DNS and the kubelet has no
// --cluster-dns; it gets the node's resolver configuration instead (the
// kubelet records a MissingClusterDNS event).
var ErrNoClusterDNS = errors.New("kubelet does not have ClusterDNS IP configured and cannot create Pod using \"ClusterFirst\" policy. Falling back to \"Default\" policy")
