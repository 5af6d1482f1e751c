package testing

import (
	"fmt"
	"slices"
	"sync"

	"podline.dev/pkg/object"
	"podline.dev/services/controller-manager/internal/controller"
)

// FakeRecorder keeps events as "Type Reason Message".
type FakeRecorder struct {
	mu     sync.Mutex
	events []string
}

var _ controller.EventRecorder = (*FakeRecorder)(nil)

func (r *FakeRecorder) Eventf(_ object.Object, eventType, reason, messageFmt string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, eventType+" "+reason+" "+fmt.Sprintf(messageFmt, args...))
}

// Events returns the events recorded so far, in order.
func (r *FakeRecorder) Events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Clear forgets the recorded events.
func (r *FakeRecorder) Clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = nil
}
