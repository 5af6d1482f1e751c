package watchcache

import "errors"

// Errors Apply returns. They are programming or wiring errors of the event
// source, never shown to API clients: the source should log them and relist
// (Replace) rather than go on with a cache it can no longer trust.
var (
	// ErrNotInitialized is returned by Apply before the first Replace: the
	// cache serves nothing until it has a listed state to start from.
	ErrNotInitialized = errors.New("watchcache: Apply before the first Replace")

	// ErrOutOfOrder is returned by Apply for an event whose revision is not
	// greater than Revision(); the event is dropped and the cache unchanged.
	ErrOutOfOrder = errors.New("watchcache: event revision out of order")

	// ErrInvalidEvent is returned by Apply for an event with a type other
	// than Added, Modified or Deleted, or without an object.
	ErrInvalidEvent = errors.New("watchcache: invalid event")
)
