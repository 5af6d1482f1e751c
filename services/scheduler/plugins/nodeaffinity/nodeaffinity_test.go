package nodeaffinity

import (
	"context"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	st "podline.dev/services/scheduler/testing"
)

func TestFilter(t *testing.T) {
	node := st.MakeNode().Name("n1").Zone("a").Label("disk", "ssd").Label("cores", "8").Obj()
	reject := framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match Pod's node affinity/selector")
	req := func(key, op string, values ...string) *corev1.NodeSelectorRequirement {
		return &corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
	}
	tests := []struct {
		name string
		pod  *st.PodWrapper
		want *framework.Status
	}{
		{"nodeSelector matches", st.MakePod().Name("p").NodeSelector(map[string]string{"disk": "ssd"}), nil},
		{"nodeSelector does not match", st.MakePod().Name("p").NodeSelector(map[string]string{"disk": "hdd"}), reject},
		{"nodeSelector key missing", st.MakePod().Name("p").NodeSelector(map[string]string{"gpu": "true"}), reject},
		{"affinity In", st.MakePod().Name("p").NodeAffinityIn("topology.kubernetes.io/zone", "a", "b"), nil},
		{"affinity In, other zone", st.MakePod().Name("p").NodeAffinityIn("topology.kubernetes.io/zone", "b"), reject},
		{"terms are ORed", st.MakePod().Name("p").NodeAffinityIn("topology.kubernetes.io/zone", "b").NodeAffinityIn("disk", "ssd"), nil},
		{"requirements in a term are ANDed", st.MakePod().Name("p").NodeAffinityTerm(req("disk", "In", "ssd"), req("topology.kubernetes.io/zone", "In", "b")), reject},
		{"NotIn", st.MakePod().Name("p").NodeAffinityTerm(req("disk", "NotIn", "hdd")), nil},
		{"Exists", st.MakePod().Name("p").NodeAffinityTerm(req("disk", "Exists")), nil},
		{"DoesNotExist", st.MakePod().Name("p").NodeAffinityTerm(req("disk", "DoesNotExist")), reject},
		{"Gt", st.MakePod().Name("p").NodeAffinityTerm(req("cores", "Gt", "4")), nil},
		{"Lt", st.MakePod().Name("p").NodeAffinityTerm(req("cores", "Lt", "4")), reject},
		{"selector and affinity must both hold", st.MakePod().Name("p").NodeSelector(map[string]string{"disk": "hdd"}).NodeAffinityIn("disk", "ssd"), reject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := &NodeAffinity{}
			state := framework.NewCycleState()
			if _, s := pl.PreFilter(context.Background(), state, tt.pod.Obj(), nil); !s.IsSuccess() {
				t.Fatalf("PreFilter = %v", s)
			}
			if got := pl.Filter(context.Background(), state, tt.pod.Obj(), st.NodeInfo(node)); !got.Equal(tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPreFilterSkipsPodsWithoutConstraints(t *testing.T) {
	if _, s := (&NodeAffinity{}).PreFilter(context.Background(), framework.NewCycleState(), st.MakePod().Name("p").Obj(), nil); !s.IsSkip() {
		t.Errorf("PreFilter = %v, want Skip", s)
	}
}

func TestScore(t *testing.T) {
	pod := st.MakePod().Name("p").PreferredNodeAffinityIn(5, "disk", "ssd").PreferredNodeAffinityIn(2, "topology.kubernetes.io/zone", "a").Obj()
	nodes := []*corev1.Node{
		st.MakeNode().Name("both").Label("disk", "ssd").Zone("a").Obj(),
		st.MakeNode().Name("ssd").Label("disk", "ssd").Zone("b").Obj(),
		st.MakeNode().Name("zone").Zone("a").Obj(),
		st.MakeNode().Name("none").Obj(),
	}
	pl := &NodeAffinity{}
	state := framework.NewCycleState()
	pl.PreScore(context.Background(), state, pod, nil)
	var scores framework.NodeScoreList
	for _, n := range nodes {
		s, _ := pl.Score(context.Background(), state, pod, st.NodeInfo(n))
		scores = append(scores, framework.NodeScore{Name: n.GetMetadata().GetName(), Score: s})
	}
	pl.NormalizeScore(context.Background(), state, pod, scores)
	want := map[string]int64{"both": 100, "ssd": 71, "zone": 28, "none": 0}
	for _, s := range scores {
		if s.Score != want[s.Name] {
			t.Errorf("%s: %d, want %d", s.Name, s.Score, want[s.Name])
		}
	}
}
