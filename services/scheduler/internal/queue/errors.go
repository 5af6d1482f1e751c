package queue

import "errors"

var (
	// ErrClosed is returned by Pop once the queue is closed.
	ErrClosed = errors.New("scheduling queue is closed")
	// ErrAlreadyQueued is returned by AddUnschedulableIfNotPresent for a pod already in a queue.
	ErrAlreadyQueued = errors.New("pod is already present in a scheduling queue")
)
