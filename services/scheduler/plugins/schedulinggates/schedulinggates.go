// Package schedulinggates keeps pods with spec.schedulingGates out of the
// active queue (PreEnqueue) until the gates are removed.
package schedulinggates

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
)

// Name is the plugin's name in profiles.
const Name = "SchedulingGates"

// SchedulingGates is the PreEnqueue plugin.
type SchedulingGates struct{}

var _ framework.PreEnqueuePlugin = (*SchedulingGates)(nil)

// New builds the plugin.
func New(context.Context, json.RawMessage, framework.Handle) (framework.Plugin, error) {
	return &SchedulingGates{}, nil
}

func (*SchedulingGates) Name() string { return Name }

// PreEnqueue holds back a pod that still has gates.
func (*SchedulingGates) PreEnqueue(_ context.Context, pod *corev1.Pod) *framework.Status {
	gates := pod.GetSpec().GetSchedulingGates()
	if len(gates) == 0 {
		return nil
	}
	names := make([]string, len(gates))
	for i, g := range gates {
		names[i] = g.GetName()
	}
	return framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("waiting for scheduling gates: %v", names))
}
