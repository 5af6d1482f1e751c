package nodename

import (
	"context"
	"testing"

	"podline.dev/services/scheduler/internal/framework"
	st "podline.dev/services/scheduler/testing"
)

func TestFilter(t *testing.T) {
	node := st.MakeNode().Name("n1").Obj()
	tests := []struct {
		name string
		pod  *st.PodWrapper
		want *framework.Status
	}{
		{"no node name", st.MakePod().Name("a"), nil},
		{"the same node", st.MakePod().Name("a").Node("n1"), nil},
		{"another node", st.MakePod().Name("a").Node("n2"), framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match the requested node name")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := (&NodeName{}).Filter(context.Background(), framework.NewCycleState(), tt.pod.Obj(), st.NodeInfo(node))
			if !got.Equal(tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
		})
	}
}
