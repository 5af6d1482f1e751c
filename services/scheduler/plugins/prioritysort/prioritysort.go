// Package prioritysort orders the active queue: higher spec.priority first,
// then older pods (creation time), then the pod that entered the queue first.
package prioritysort

import (
	"context"
	"encoding/json"

	"podline.dev/services/scheduler/internal/framework"
)

// Name is the plugin's name in profiles.
const Name = "PrioritySort"

// PrioritySort is the QueueSort plugin.
type PrioritySort struct{}

var _ framework.QueueSortPlugin = (*PrioritySort)(nil)

// New builds the plugin.
func New(context.Context, json.RawMessage, framework.Handle) (framework.Plugin, error) {
	return &PrioritySort{}, nil
}

func (*PrioritySort) Name() string { return Name }

// Less is true when a should be scheduled before b.
func (*PrioritySort) Less(a, b *framework.QueuedPodInfo) bool {
	pa, pb := a.Pod.GetSpec().GetPriority(), b.Pod.GetSpec().GetPriority()
	if pa != pb {
		return pa > pb
	}
	ca, cb := a.Pod.GetMetadata().GetCreationTimestamp().GetSeconds(), b.Pod.GetMetadata().GetCreationTimestamp().GetSeconds()
	if ca != cb {
		return ca < cb
	}
	return a.Timestamp.Before(b.Timestamp)
}
