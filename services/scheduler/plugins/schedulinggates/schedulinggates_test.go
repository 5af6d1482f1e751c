package schedulinggates

import (
	"context"
	"testing"

	"podline.dev/services/scheduler/internal/framework"
	st "podline.dev/services/scheduler/testing"
)

func TestPreEnqueue(t *testing.T) {
	tests := []struct {
		name string
		pod  *st.PodWrapper
		want *framework.Status
	}{
		{"no gates", st.MakePod().Name("a"), nil},
		{"gated", st.MakePod().Name("a").SchedulingGate("example.com/foo").SchedulingGate("example.com/bar"),
			framework.NewStatus(framework.UnschedulableAndUnresolvable, "waiting for scheduling gates: [example.com/foo example.com/bar]")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (&SchedulingGates{}).PreEnqueue(context.Background(), tt.pod.Obj()); !got.Equal(tt.want) {
				t.Errorf("PreEnqueue = %v, want %v", got, tt.want)
			}
		})
	}
}
