package balancedallocation

import (
	"context"
	"testing"

	"podline.dev/services/scheduler/internal/framework"
	st "podline.dev/services/scheduler/testing"
)

func TestScore(t *testing.T) {
	tests := []struct {
		name     string
		pod      *st.PodWrapper
		node     *st.NodeWrapper
		existing []*st.PodWrapper
		want     int64
	}{
		// cpu 1/4 = .25, mem 1/4 = .25: perfectly balanced.
		{name: "balanced", pod: st.MakePod().Name("p").Req("1", "2Gi"), node: st.MakeNode().Name("n").Capacity("4", "8Gi"), want: 100},
		// cpu 3/4 = .75, mem 1/4 = .25: std .25.
		{name: "unbalanced", pod: st.MakePod().Name("p").Req("3", "2Gi"), node: st.MakeNode().Name("n").Capacity("4", "8Gi"), want: 75},
		// existing pods count: cpu (2+1)/4 = .75, mem (0+2)/8 = .25.
		{name: "with existing pods", pod: st.MakePod().Name("p").Req("1", "2Gi"), node: st.MakeNode().Name("n").Capacity("4", "8Gi"),
			existing: []*st.PodWrapper{st.MakePod().Name("e").Node("n").Req("2", "")}, want: 75},
		// fractions above 1 are capped: cpu 8/4 → 1, mem .25.
		{name: "over capacity is capped", pod: st.MakePod().Name("p").Req("8", "2Gi"), node: st.MakeNode().Name("n").Capacity("4", "8Gi"), want: 62},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := New(context.Background(), nil, nil)
			b := pl.(*BalancedAllocation)
			ni := st.NodeInfo(tt.node.Obj())
			for _, p := range tt.existing {
				ni.AddPod(p.Obj())
			}
			state := framework.NewCycleState()
			if s := b.PreScore(context.Background(), state, tt.pod.Obj(), nil); !s.IsSuccess() {
				t.Fatal(s)
			}
			got, s := b.Score(context.Background(), state, tt.pod.Obj(), ni)
			if !s.IsSuccess() || got != tt.want {
				t.Errorf("Score = %d (%v), want %d", got, s, tt.want)
			}
		})
	}
}

func TestPreScoreSkipsPodsWithoutRequests(t *testing.T) {
	pl, _ := New(context.Background(), nil, nil)
	if s := pl.(*BalancedAllocation).PreScore(context.Background(), framework.NewCycleState(), st.MakePod().Name("p").Container("x").Obj(), nil); !s.IsSkip() {
		t.Errorf("PreScore = %v, want Skip", s)
	}
}
