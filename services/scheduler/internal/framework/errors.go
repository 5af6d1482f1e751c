package framework

import "errors"

var (
	// ErrNotFound is returned by CycleState.Read for a key nobody wrote.
	ErrNotFound = errors.New("not found")
	// ErrNoNodesAvailable is Kubernetes' error when the cluster has no nodes.
	ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")
)
