package cache

import (
	"errors"
	"fmt"

	"podline.dev/pkg/object"
)

var (
	// ErrFIFOClosed is returned by Pop once the DeltaFIFO is closed and empty.
	ErrFIFOClosed = errors.New("cache: DeltaFIFO is closed")
	// ErrIndexNotFound is wrapped by index queries that name an index the indexer does not have.
	ErrIndexNotFound = errors.New("cache: no such index")
	// ErrNoMetadata is wrapped by the key functions for an object without metadata.
	ErrNoMetadata = errors.New("cache: object has no metadata")
	// ErrInformerStopped is returned by AddEventHandler on an informer that has stopped.
	ErrInformerStopped = errors.New("cache: informer has stopped")
)

// KeyError is an object whose key could not be computed.
type KeyError struct {
	Obj object.Object
	Err error
}

func (e KeyError) Error() string {
	return fmt.Sprintf("cache: couldn't compute the key of %T: %v", e.Obj, e.Err)
}

func (e KeyError) Unwrap() error { return e.Err }
