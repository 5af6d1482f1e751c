package cache

import "errors"

var (
	// ErrPodNotFound is returned for a pod the cache does not hold.
	ErrPodNotFound = errors.New("pod not found in the scheduler cache")
	// ErrPodAssumed is returned when a pod is assumed twice.
	ErrPodAssumed = errors.New("pod is already in the scheduler cache")
	// ErrNotAssumed is returned by FinishBinding and ForgetPod for a pod that was not assumed.
	ErrNotAssumed = errors.New("pod was not assumed")
)
