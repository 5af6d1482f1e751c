package scheduler

import "errors"

var (
	// ErrNoProfile is logged for a pod whose schedulerName has no profile here.
	ErrNoProfile = errors.New("no profile for the pod's schedulerName")
	// ErrNoBinder is returned when every Bind plugin skipped the pod.
	ErrNoBinder = errors.New("no bind plugin bound the pod")
)
