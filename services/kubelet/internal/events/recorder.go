package events

import (
	"fmt"
	"sync"

	"podline.dev/pkg/client/record"
	"podline.dev/pkg/object"
)

// Event types.
const (
	Normal  = record.EventTypeNormal
	Warning = record.EventTypeWarning
)

// Component is the source component of the kubelet's events.
const Component = "kubelet"

// Recorder records events about objects.
type Recorder interface {
	// Eventf records an event about obj (a pod); fieldPath names the part
	// of it the event is about ("spec.containers{web}"), or is "".
	Eventf(obj object.Object, fieldPath, eventtype, reason, format string, args ...any)
}

// ContainerPath is the fieldPath of one container of a pod.
func ContainerPath(container string, init bool) string {
	if init {
		return "spec.initContainers{" + container + "}"
	}
	return "spec.containers{" + container + "}"
}

// FromRecord records through pkg/client/record, which writes the Events
// (with source kubelet/<node>, involvedObject.fieldPath naming the
// container, folding repeats, in the object's trace).
type FromRecord struct{ R *record.Recorder }

var _ Recorder = FromRecord{}

func (f FromRecord) Eventf(obj object.Object, fieldPath, eventtype, reason, format string, args ...any) {
	f.R.EventfAt(obj, fieldPath, eventtype, reason, format, args...)
}

// Recorded is one event a Fake saw.
type Recorded struct {
	Object    string // namespace/name
	FieldPath string
	Type      string
	Reason    string
	Message   string
}

func (r Recorded) String() string { return r.Type + " " + r.Reason + " " + r.Message }

// Fake keeps events in memory.
type Fake struct {
	mu     sync.Mutex
	events []Recorded
}

var _ Recorder = (*Fake)(nil)

func (f *Fake) Eventf(obj object.Object, fieldPath, eventtype, reason, format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, Recorded{Object: object.Key(obj), FieldPath: fieldPath, Type: eventtype, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// Events returns what was recorded, in order.
func (f *Fake) Events() []Recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Recorded(nil), f.events...)
}

// Reasons returns the reasons recorded, in order.
func (f *Fake) Reasons() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.events))
	for i, e := range f.events {
		out[i] = e.Reason
	}
	return out
}
