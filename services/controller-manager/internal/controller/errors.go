package controller

import "errors"

var (
	// ErrWrongKind is returned by an ObjectClient given an object of another kind.
	ErrWrongKind = errors.New("controller: object is not of the client's kind")
	// ErrCacheNotSynced is returned by Run when the informers did not sync before the context ended.
	ErrCacheNotSynced = errors.New("controller: caches did not sync")
	// ErrOwnerGone is returned by adoption when the controller was replaced or deleted.
	ErrOwnerGone = errors.New("controller: the owner is gone or being deleted")
)
