package app

import "errors"

var (
	// ErrLeadershipLost is returned by Run when this instance stopped being
	// the leader; the process should exit, as kube-controller-manager does.
	ErrLeadershipLost = errors.New("controller-manager: leader election lost")
	// ErrUnknownController is returned for a --controllers entry no controller has.
	ErrUnknownController = errors.New("controller-manager: unknown controller")
	// ErrNotConfigured is returned by a Factory whose controller lacks what
	// it needs (root-ca-cert-publisher without --root-ca-file); Run leaves
	// that controller off and says so.
	ErrNotConfigured = errors.New("controller-manager: controller not configured")
)
