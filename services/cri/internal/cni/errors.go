package cni

import "errors"

var (
	// ErrNotReady: no network configuration yet (no CNI config in the
	// directory, or no pod CIDR to put in it).
	ErrNotReady = errors.New("network plugin is not ready")
	// ErrNoIP: the plugin answered without an address for the pod.
	ErrNoIP = errors.New("network plugin returned no IP for the pod")
)
