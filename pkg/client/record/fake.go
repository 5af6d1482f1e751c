package record

import (
	"fmt"

	"podline.dev/pkg/object"
)

// FakeRecorder is an EventRecorder for unit tests: each event arrives on
// Events as "<type> <reason> <message>" (client-go's format). With a nil
// Events channel, events are discarded; a full channel drops them.
type FakeRecorder struct {
	Events chan string
}

var _ EventRecorder = (*FakeRecorder)(nil)

// NewFakeRecorder returns a FakeRecorder buffering up to size events.
func NewFakeRecorder(size int) *FakeRecorder {
	return &FakeRecorder{Events: make(chan string, size)}
}

func (f *FakeRecorder) Eventf(_ object.Object, eventtype, reason, messageFmt string, args ...any) {
	if f.Events == nil {
		return
	}
	select {
	case f.Events <- eventtype + " " + reason + " " + fmt.Sprintf(messageFmt, args...):
	default:
	}
}
