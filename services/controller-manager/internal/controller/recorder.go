package controller

import (
	"podline.dev/pkg/object"
)

// Event types, as in Kubernetes.
const (
	EventTypeNormal  = "Normal"
	EventTypeWarning = "Warning"
)

// EventRecorder records an event about an object. It is the one method the
// controllers need from an event recorder (pkg/client/record's, or a fake in
// tests).
type EventRecorder interface {
	Eventf(obj object.Object, eventType, reason, messageFmt string, args ...any)
}

// RecorderFactory makes the recorder of a component ("replicaset-controller").
type RecorderFactory func(component string) EventRecorder

// DiscardRecorder drops every event.
type DiscardRecorder struct{}

var _ EventRecorder = DiscardRecorder{}

func (DiscardRecorder) Eventf(object.Object, string, string, string, ...any) {}
