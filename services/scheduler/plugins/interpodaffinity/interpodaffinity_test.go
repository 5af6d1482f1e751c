package interpodaffinity

import (
	"context"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	st "podline.dev/services/scheduler/testing"
)

const zone = "topology.kubernetes.io/zone"

var (
	nodes = []*corev1.Node{
		st.MakeNode().Name("a1").Zone("a").Obj(),
		st.MakeNode().Name("a2").Zone("a").Obj(),
		st.MakeNode().Name("b1").Zone("b").Obj(),
		st.MakeNode().Name("nozone").Obj(),
	}
	db  = map[string]string{"app": "db"}
	web = map[string]string{"app": "web"}

	affinityNotMatch         = framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match pod affinity rules")
	antiAffinityNotMatch     = framework.NewStatus(framework.Unschedulable, "node(s) didn't match pod anti-affinity rules")
	existingAntiAffinityFail = framework.NewStatus(framework.Unschedulable, "node(s) didn't satisfy existing pods anti-affinity rules")
)

func run(t *testing.T, pod *corev1.Pod, pods []*corev1.Pod) (map[string]*framework.Status, bool) {
	t.Helper()
	snap := st.Snapshot(nodes, pods)
	pl, err := New(context.Background(), nil, st.NewHandle(snap))
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*InterPodAffinity)
	state := framework.NewCycleState()
	_, s := p.PreFilter(context.Background(), state, pod, snap.List())
	if s.IsSkip() {
		return nil, true
	}
	if !s.IsSuccess() {
		t.Fatalf("PreFilter = %v", s)
	}
	out := map[string]*framework.Status{}
	for _, ni := range snap.List() {
		out[ni.Name()] = p.Filter(context.Background(), state, pod, ni)
	}
	return out, false
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name string
		pod  *corev1.Pod
		pods []*corev1.Pod
		want map[string]*framework.Status
	}{
		{
			name: "affinity to a zone holding a db pod",
			pod:  st.MakePod().Name("p").PodAffinity(zone, db).Obj(),
			pods: []*corev1.Pod{st.MakePod().Name("db").Labels(db).Node("a1").Obj()},
			want: map[string]*framework.Status{"a1": nil, "a2": nil, "b1": affinityNotMatch, "nozone": affinityNotMatch},
		},
		{
			name: "affinity with no matching pod anywhere",
			pod:  st.MakePod().Name("p").PodAffinity(zone, db).Obj(),
			want: map[string]*framework.Status{"a1": affinityNotMatch, "b1": affinityNotMatch},
		},
		{
			name: "the first pod of a self-affine group may go anywhere with the key",
			pod:  st.MakePod().Name("p").Labels(db).PodAffinity(zone, db).Obj(),
			want: map[string]*framework.Status{"a1": nil, "b1": nil, "nozone": affinityNotMatch},
		},
		{
			name: "anti-affinity keeps the pod out of the db zone",
			pod:  st.MakePod().Name("p").PodAntiAffinity(zone, db).Obj(),
			pods: []*corev1.Pod{st.MakePod().Name("db").Labels(db).Node("a1").Obj()},
			want: map[string]*framework.Status{"a1": antiAffinityNotMatch, "a2": antiAffinityNotMatch, "b1": nil, "nozone": nil},
		},
		{
			name: "an existing pod's anti-affinity keeps the pod out of its zone",
			pod:  st.MakePod().Name("p").Labels(web).Obj(),
			pods: []*corev1.Pod{st.MakePod().Name("db").Labels(db).Node("b1").PodAntiAffinity(zone, web).Obj()},
			want: map[string]*framework.Status{"a1": nil, "b1": existingAntiAffinityFail, "nozone": nil},
		},
		{
			name: "pods in other namespaces do not count",
			pod:  st.MakePod().Name("p").PodAntiAffinity(zone, db).Obj(),
			pods: []*corev1.Pod{st.MakePod().Name("db").Namespace("other").Labels(db).Node("a1").Obj()},
			want: map[string]*framework.Status{"a1": nil, "b1": nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped := run(t, tt.pod, tt.pods)
			if skipped {
				t.Fatal("PreFilter skipped")
			}
			for n, want := range tt.want {
				if !got[n].Equal(want) {
					t.Errorf("%s: %v, want %v", n, got[n], want)
				}
			}
		})
	}
}

func TestPreFilterSkipsWhenNothingApplies(t *testing.T) {
	if _, skipped := run(t, st.MakePod().Name("p").Obj(), []*corev1.Pod{st.MakePod().Name("db").Labels(db).Node("a1").Obj()}); !skipped {
		t.Error("want Skip")
	}
}

func TestScore(t *testing.T) {
	pod := st.MakePod().Name("p").Labels(web).PreferredPodAffinity(10, zone, db).PreferredPodAntiAffinity(5, zone, web).Obj()
	pods := []*corev1.Pod{
		st.MakePod().Name("db").Labels(db).Node("a1").Obj(),
		st.MakePod().Name("web").Labels(web).Node("b1").Obj(),
	}
	snap := st.Snapshot(nodes, pods)
	pl, _ := New(context.Background(), nil, st.NewHandle(snap))
	p := pl.(*InterPodAffinity)
	state := framework.NewCycleState()
	if s := p.PreScore(context.Background(), state, pod, snap.List()); !s.IsSuccess() {
		t.Fatal(s)
	}
	var scores framework.NodeScoreList
	for _, ni := range snap.List() {
		s, _ := p.Score(context.Background(), state, pod, ni)
		scores = append(scores, framework.NodeScore{Name: ni.Name(), Score: s})
	}
	p.NormalizeScore(context.Background(), state, pod, scores)
	// zone a: +10, zone b: −5, nozone: 0 → normalized over [−5, 10].
	want := map[string]int64{"a1": 100, "a2": 100, "b1": 0, "nozone": 33}
	for _, s := range scores {
		if s.Score != want[s.Name] {
			t.Errorf("%s: %d, want %d", s.Name, s.Score, want[s.Name])
		}
	}
}
