package nodeunschedulable

import (
	"context"
	"testing"

	"podline.dev/services/scheduler/internal/framework"
	st "podline.dev/services/scheduler/testing"
)

func TestFilter(t *testing.T) {
	tests := []struct {
		name string
		pod  *st.PodWrapper
		node *st.NodeWrapper
		want *framework.Status
	}{
		{"schedulable node", st.MakePod().Name("a"), st.MakeNode().Name("n1"), nil},
		{"cordoned node", st.MakePod().Name("a"), st.MakeNode().Name("n1").Unschedulable(true),
			framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) were unschedulable")},
		{"cordoned node, pod tolerates it", st.MakePod().Name("a").Toleration("node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"),
			st.MakeNode().Name("n1").Unschedulable(true), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := (&NodeUnschedulable{}).Filter(context.Background(), framework.NewCycleState(), tt.pod.Obj(), st.NodeInfo(tt.node.Obj()))
			if !got.Equal(tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
		})
	}
}
