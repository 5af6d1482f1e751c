package events

import (
	"fmt"
	"sync"

	corev1 "podline.dev/proto/core/v1"
)

// Event types.
const (
	Normal  = "Normal"
	Warning = "Warning"
)

// Recorder records events about objects.
type Recorder interface {
	// Eventf records an event about ref (a pod, or one of its containers
	// with FieldPath "spec.containers{name}").
	Eventf(ref *corev1.ObjectReference, eventtype, reason, format string, args ...any)
}

// PodRef refers to a pod.
func PodRef(pod *corev1.Pod) *corev1.ObjectReference {
	md := pod.GetMetadata()
	return &corev1.ObjectReference{
		Kind: "Pod", ApiVersion: "v1", Namespace: md.GetNamespace(), Name: md.GetName(),
		Uid: md.GetUid(), ResourceVersion: md.GetResourceVersion(),
	}
}

// ContainerRef refers to one container of a pod.
func ContainerRef(pod *corev1.Pod, container string, init bool) *corev1.ObjectReference {
	ref := PodRef(pod)
	if init {
		ref.FieldPath = "spec.initContainers{" + container + "}"
	} else {
		ref.FieldPath = "spec.containers{" + container + "}"
	}
	return ref
}

// NodeRef refers to a node.
func NodeRef(name, uid string) *corev1.ObjectReference {
	return &corev1.ObjectReference{Kind: "Node", ApiVersion: "v1", Name: name, Uid: uid}
}

// Recorded is one event a Fake saw.
type Recorded struct {
	Ref     *corev1.ObjectReference
	Type    string
	Reason  string
	Message string
}

func (r Recorded) String() string { return r.Type + " " + r.Reason + " " + r.Message }

// Fake keeps events in memory.
type Fake struct {
	mu     sync.Mutex
	events []Recorded
}

var _ Recorder = (*Fake)(nil)

func (f *Fake) Eventf(ref *corev1.ObjectReference, eventtype, reason, format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, Recorded{Ref: ref, Type: eventtype, Reason: reason, Message: fmt.Sprintf(format, args...)})
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
