package leaderelection

import "errors"

var (
	// ErrLockNotFound is returned (wrapped) by a Lock whose record does not exist yet.
	ErrLockNotFound = errors.New("leaderelection: lock not found")
	// ErrLockConflict is returned (wrapped) by a Lock whose record changed since it was read.
	ErrLockConflict = errors.New("leaderelection: lock changed since it was read")
	// ErrInvalidConfig is returned (wrapped) by New for a Config it cannot run.
	ErrInvalidConfig = errors.New("leaderelection: invalid config")
)
