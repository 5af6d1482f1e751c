package allocator

import (
	"errors"
	"fmt"
)

// Sentinels of allocation; their texts are kube-apiserver's.
var (
	// ErrFull: no free offset is left in the range.
	ErrFull = errors.New("range is full")
	// ErrAllocatedIP: the requested IP is in use.
	ErrAllocatedIP = errors.New("provided IP is already allocated")
	// ErrAllocatedPort: the requested port is in use.
	ErrAllocatedPort = errors.New("provided port is already allocated")
	// ErrConflict: the stored snapshot changed under a repair; run it again.
	ErrConflict = errors.New("range allocation changed during repair")
)

// NotInRangeError: the requested IP or port lies outside the range.
type NotInRangeError struct {
	// Value is the IP or port asked for; Range the valid range.
	Value, Range string
	// Port is true for a node port.
	Port bool
}

func (e *NotInRangeError) Error() string {
	if e.Port {
		return fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %s", e.Range)
	}
	return fmt.Sprintf("the provided IP (%s) is not in the valid range. The range of valid IPs is %s", e.Value, e.Range)
}

// StoreError wraps a failure of the store (etcd unavailable, a timeout),
// as opposed to a refused request.
type StoreError struct{ Err error }

func (e *StoreError) Error() string { return e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }
