package tainttoleration

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
		{"no taints", st.MakePod().Name("a"), st.MakeNode().Name("n1"), nil},
		{"control-plane taint not tolerated", st.MakePod().Name("a"),
			st.MakeNode().Name("n1").Taint("node-role.kubernetes.io/control-plane", "", "NoSchedule"),
			framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }")},
		{"taint with a value", st.MakePod().Name("a"), st.MakeNode().Name("n1").Taint("dedicated", "gpu", "NoExecute"),
			framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {dedicated: gpu}")},
		{"tolerated by Exists", st.MakePod().Name("a").Toleration("node-role.kubernetes.io/control-plane", "Exists", "", "NoSchedule"),
			st.MakeNode().Name("n1").Taint("node-role.kubernetes.io/control-plane", "", "NoSchedule"), nil},
		{"tolerated by Equal", st.MakePod().Name("a").Toleration("dedicated", "Equal", "gpu", ""),
			st.MakeNode().Name("n1").Taint("dedicated", "gpu", "NoSchedule"), nil},
		{"Equal with another value", st.MakePod().Name("a").Toleration("dedicated", "Equal", "cpu", ""),
			st.MakeNode().Name("n1").Taint("dedicated", "gpu", "NoSchedule"),
			framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {dedicated: gpu}")},
		{"toleration for another effect", st.MakePod().Name("a").Toleration("dedicated", "Exists", "", "NoExecute"),
			st.MakeNode().Name("n1").Taint("dedicated", "gpu", "NoSchedule"),
			framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) had untolerated taint {dedicated: gpu}")},
		{"empty key with Exists tolerates everything", st.MakePod().Name("a").Toleration("", "Exists", "", ""),
			st.MakeNode().Name("n1").Taint("a", "b", "NoSchedule").Taint("c", "", "NoExecute"), nil},
		{"PreferNoSchedule does not filter", st.MakePod().Name("a"), st.MakeNode().Name("n1").Taint("a", "b", "PreferNoSchedule"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, _ := New(context.Background(), nil, nil)
			got := pl.(*TaintToleration).Filter(context.Background(), framework.NewCycleState(), tt.pod.Obj(), st.NodeInfo(tt.node.Obj()))
			if !got.Equal(tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestScore(t *testing.T) {
	nodes := []*st.NodeWrapper{
		st.MakeNode().Name("clean"),
		st.MakeNode().Name("one").Taint("a", "", "PreferNoSchedule"),
		st.MakeNode().Name("two").Taint("a", "", "PreferNoSchedule").Taint("b", "", "PreferNoSchedule"),
		st.MakeNode().Name("tolerated").Taint("c", "", "PreferNoSchedule"),
	}
	pod := st.MakePod().Name("p").Toleration("c", "Exists", "", "PreferNoSchedule").Obj()
	pl := &TaintToleration{}
	state := framework.NewCycleState()
	pl.PreScore(context.Background(), state, pod, nil)
	var scores framework.NodeScoreList
	for _, n := range nodes {
		s, st := pl.Score(context.Background(), state, pod, st.NodeInfo(n.Obj()))
		if !st.IsSuccess() {
			t.Fatal(st)
		}
		scores = append(scores, framework.NodeScore{Name: n.Obj().GetMetadata().GetName(), Score: s})
	}
	pl.NormalizeScore(context.Background(), state, pod, scores)
	want := map[string]int64{"clean": 100, "one": 50, "two": 0, "tolerated": 100}
	for _, s := range scores {
		if want[s.Name] != s.Score {
			t.Errorf("score of %s = %d, want %d", s.Name, s.Score, want[s.Name])
		}
	}
}

func TestQueueingHint(t *testing.T) {
	pod := st.MakePod().Name("p").Obj()
	tainted := st.MakeNode().Name("n1").Taint("node-role.kubernetes.io/control-plane", "", "NoSchedule").Obj()
	clean := st.MakeNode().Name("n1").Obj()
	otherTaint := st.MakeNode().Name("n1").Taint("x", "", "NoSchedule").Obj()
	tests := []struct {
		name     string
		old, new any
		want     framework.QueueingHint
	}{
		{"taint removed", tainted, clean, framework.Queue},
		{"taint replaced by another", tainted, otherTaint, framework.QueueSkip},
		{"taint added", clean, tainted, framework.QueueSkip},
		{"clean node added", nil, clean, framework.Queue},
		{"tainted node added", nil, tainted, framework.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var oldObj, newObj = asNode(tt.old), asNode(tt.new)
			got, err := isSchedulableAfterNodeChange(pod, oldObj, newObj)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v (%v), want %v", got, err, tt.want)
			}
		})
	}
}
