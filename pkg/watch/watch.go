// Package watch defines the stream of changes a client receives from a
// watch: typed events, as in Kubernetes (ADDED, MODIFIED, DELETED, BOOKMARK,
// ERROR), behind a small Interface that the gRPC client, the informers and
// test sources all implement.
package watch

import "podline.dev/pkg/object"

// EventType is the kind of change.
type EventType string

const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
	// Error carries no object; Err says what ended the stream.
	Error EventType = "ERROR"
)

// Event is one change. For Bookmark, Object holds only metadata.resourceVersion.
type Event struct {
	Type   EventType
	Object object.Object
	// Err is set for Error events (an *apierrors.StatusError, e.g. 410 Expired).
	Err error
}

// Interface is a running watch. ResultChan is closed when the watch ends;
// Stop ends it early and may be called more than once.
type Interface interface {
	ResultChan() <-chan Event
	Stop()
}
