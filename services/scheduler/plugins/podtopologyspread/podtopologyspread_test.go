package podtopologyspread

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	st "podline.dev/services/scheduler/testing"
)

const zone = "topology.kubernetes.io/zone"

var (
	fooSel         = map[string]string{"app": "foo"}
	notMatch       = framework.NewStatus(framework.Unschedulable, "node(s) didn't match pod topology spread constraints")
	missingLabel   = framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) didn't match pod topology spread constraints (missing required label)")
	threeZoneNodes = []*corev1.Node{
		st.MakeNode().Name("a1").Zone("a").Obj(), st.MakeNode().Name("a2").Zone("a").Obj(),
		st.MakeNode().Name("b1").Zone("b").Obj(),
		st.MakeNode().Name("c1").Zone("c").Obj(),
	}
)

func foo(name, node string) *corev1.Pod {
	return st.MakePod().Name(name).Label("app", "foo").Node(node).Obj()
}

func filterAll(t *testing.T, pod *corev1.Pod, nodes []*corev1.Node, pods []*corev1.Pod) map[string]*framework.Status {
	t.Helper()
	snap := st.Snapshot(nodes, pods)
	pl, _ := New(context.Background(), nil, st.NewHandle(snap))
	p := pl.(*PodTopologySpread)
	state := framework.NewCycleState()
	if _, s := p.PreFilter(context.Background(), state, pod, snap.List()); !s.IsSuccess() {
		t.Fatalf("PreFilter = %v", s)
	}
	out := map[string]*framework.Status{}
	for _, ni := range snap.List() {
		out[ni.Name()] = p.Filter(context.Background(), state, pod, ni)
	}
	return out
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name  string
		pod   *corev1.Pod
		nodes []*corev1.Node
		pods  []*corev1.Pod
		want  map[string]*framework.Status
	}{
		{
			name:  "empty cluster: every zone fits",
			pod:   st.MakePod().Name("p").Label("app", "foo").SpreadConstraint(1, zone, DoNotSchedule, fooSel).Obj(),
			nodes: threeZoneNodes,
			want:  map[string]*framework.Status{"a1": nil, "a2": nil, "b1": nil, "c1": nil},
		},
		{
			name:  "zone a has one more: maxSkew 1 keeps it out",
			pod:   st.MakePod().Name("p").Label("app", "foo").SpreadConstraint(1, zone, DoNotSchedule, fooSel).Obj(),
			nodes: threeZoneNodes,
			pods:  []*corev1.Pod{foo("x", "a1")},
			want:  map[string]*framework.Status{"a1": notMatch, "a2": notMatch, "b1": nil, "c1": nil},
		},
		{
			name:  "maxSkew 2 allows it",
			pod:   st.MakePod().Name("p").Label("app", "foo").SpreadConstraint(2, zone, DoNotSchedule, fooSel).Obj(),
			nodes: threeZoneNodes,
			pods:  []*corev1.Pod{foo("x", "a1")},
			want:  map[string]*framework.Status{"a1": nil, "a2": nil, "b1": nil, "c1": nil},
		},
		{
			name:  "a pod that does not match its own selector does not add to the skew",
			pod:   st.MakePod().Name("p").SpreadConstraint(1, zone, DoNotSchedule, fooSel).Obj(),
			nodes: threeZoneNodes,
			pods:  []*corev1.Pod{foo("x", "a1")},
			want:  map[string]*framework.Status{"a1": nil, "a2": nil, "b1": nil, "c1": nil},
		},
		{
			name:  "pods in another namespace and terminating pods do not count",
			pod:   st.MakePod().Name("p").Label("app", "foo").SpreadConstraint(1, zone, DoNotSchedule, fooSel).Obj(),
			nodes: threeZoneNodes,
			pods: []*corev1.Pod{
				st.MakePod().Name("x").Namespace("other").Label("app", "foo").Node("a1").Obj(),
				st.MakePod().Name("y").Label("app", "foo").Node("a1").Terminating().Obj(),
			},
			want: map[string]*framework.Status{"a1": nil, "a2": nil, "b1": nil, "c1": nil},
		},
		{
			name:  "a node without the key is unresolvable",
			pod:   st.MakePod().Name("p").Label("app", "foo").SpreadConstraint(1, zone, DoNotSchedule, fooSel).Obj(),
			nodes: append([]*corev1.Node{st.MakeNode().Name("nozone").Obj()}, threeZoneNodes...),
			want:  map[string]*framework.Status{"nozone": missingLabel, "a1": nil, "a2": nil, "b1": nil, "c1": nil},
		},
		{
			name:  "minDomains above the number of zones makes the global minimum 0",
			pod:   st.MakePod().Name("p").Label("app", "foo").SpreadConstraint(1, zone, DoNotSchedule, fooSel).MinDomains(4).Obj(),
			nodes: threeZoneNodes,
			pods:  []*corev1.Pod{foo("x", "a1"), foo("y", "b1"), foo("z", "c1")},
			want:  map[string]*framework.Status{"a1": notMatch, "a2": notMatch, "b1": notMatch, "c1": notMatch},
		},
		{
			name:  "nodes the pod's node affinity excludes do not form domains",
			pod:   st.MakePod().Name("p").Label("app", "foo").SpreadConstraint(1, zone, DoNotSchedule, fooSel).NodeAffinityIn(zone, "a", "b").Obj(),
			nodes: threeZoneNodes,
			pods:  []*corev1.Pod{foo("x", "a1")},
			// Domains are a (1) and b (0): a is full, b fits; c is not a domain so its count is 0 and the skew 1.
			want: map[string]*framework.Status{"a1": notMatch, "a2": notMatch, "b1": nil, "c1": nil},
		},
		{
			name: "hostname spreading",
			pod:  st.MakePod().Name("p").Label("app", "foo").SpreadConstraint(1, "kubernetes.io/hostname", DoNotSchedule, fooSel).Obj(),
			nodes: []*corev1.Node{
				st.MakeNode().Name("n1").Obj(), st.MakeNode().Name("n2").Obj(),
			},
			pods: []*corev1.Pod{foo("x", "n1")},
			want: map[string]*framework.Status{"n1": notMatch, "n2": nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := filterAll(t, tt.pod, tt.nodes, tt.pods)
			for node, want := range tt.want {
				if !got[node].Equal(want) {
					t.Errorf("%s: %v, want %v", node, got[node], want)
				}
			}
		})
	}
}

func TestPreFilterSkipsPodsWithoutHardConstraints(t *testing.T) {
	pl, _ := New(context.Background(), nil, st.NewHandle(st.Snapshot(nil, nil)))
	pod := st.MakePod().Name("p").SpreadConstraint(1, zone, ScheduleAnyway, fooSel).Obj()
	if _, s := pl.(*PodTopologySpread).PreFilter(context.Background(), framework.NewCycleState(), pod, nil); !s.IsSkip() {
		t.Errorf("PreFilter = %v, want Skip", s)
	}
}

func TestAddAndRemovePodUpdateTheCounts(t *testing.T) {
	pod := st.MakePod().Name("p").Label("app", "foo").SpreadConstraint(1, zone, DoNotSchedule, fooSel).Obj()
	victim := foo("x", "a1")
	snap := st.Snapshot(threeZoneNodes, []*corev1.Pod{victim})
	pl, _ := New(context.Background(), nil, st.NewHandle(snap))
	p := pl.(*PodTopologySpread)
	state := framework.NewCycleState()
	p.PreFilter(context.Background(), state, pod, snap.List())
	a1, _ := snap.Get("a1")
	if s := p.Filter(context.Background(), state, pod, a1); !s.Equal(notMatch) {
		t.Fatalf("before: %v", s)
	}
	p.RemovePod(context.Background(), state, pod, framework.NewPodInfo(victim), a1)
	if s := p.Filter(context.Background(), state, pod, a1); !s.IsSuccess() {
		t.Fatalf("after RemovePod: %v", s)
	}
	p.AddPod(context.Background(), state, pod, framework.NewPodInfo(victim), a1)
	if s := p.Filter(context.Background(), state, pod, a1); !s.Equal(notMatch) {
		t.Fatalf("after AddPod: %v", s)
	}
}

func TestScorePrefersEmptierZones(t *testing.T) {
	pod := st.MakePod().Name("p").Label("app", "foo").SpreadConstraint(1, zone, ScheduleAnyway, fooSel).Obj()
	nodes := append([]*corev1.Node{st.MakeNode().Name("nozone").Obj()}, threeZoneNodes...)
	snap := st.Snapshot(nodes, []*corev1.Pod{foo("x", "a1"), foo("y", "a2"), foo("z", "b1")})
	pl, _ := New(context.Background(), nil, st.NewHandle(snap))
	p := pl.(*PodTopologySpread)
	state := framework.NewCycleState()
	if s := p.PreScore(context.Background(), state, pod, snap.List()); !s.IsSuccess() {
		t.Fatal(s)
	}
	var scores framework.NodeScoreList
	for _, ni := range snap.List() {
		s, st := p.Score(context.Background(), state, pod, ni)
		if !st.IsSuccess() {
			t.Fatal(st)
		}
		scores = append(scores, framework.NodeScore{Name: ni.Name(), Score: s})
	}
	p.NormalizeScore(context.Background(), state, pod, scores)
	// weight log(3+2)=1.61: a: 2×1.61=3, b: 2, c: 0 → normalized 100×(3+0−s)/3.
	want := map[string]int64{"a1": 0, "a2": 0, "b1": 33, "c1": 100, "nozone": 0}
	for _, s := range scores {
		if s.Score != want[s.Name] {
			t.Errorf("%s: %d, want %d", s.Name, s.Score, want[s.Name])
		}
	}
}

func TestIndexedCountsEqualWalkedCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var nodes []*corev1.Node
	for i := range 60 {
		w := st.MakeNode().Name(fmt.Sprintf("n%02d", i))
		if i%7 != 0 { // some nodes have no zone
			w.Zone(fmt.Sprintf("z%d", i%5))
		}
		nodes = append(nodes, w.Obj())
	}
	var pods []*corev1.Pod
	for i := range 200 {
		w := st.MakePod().Name(fmt.Sprintf("p%03d", i)).Label("app", fmt.Sprintf("a%d", r.IntN(4))).Node(fmt.Sprintf("n%02d", r.IntN(60)))
		if r.IntN(5) == 0 {
			w.Namespace("other")
		}
		if r.IntN(9) == 0 {
			w.Terminating()
		}
		pods = append(pods, w.Obj())
	}
	snap := st.Snapshot(nodes, pods)
	pl, _ := New(context.Background(), nil, st.NewHandle(snap))
	p := pl.(*PodTopologySpread)
	for app := range 4 {
		pod := st.MakePod().Name("new").Label("app", fmt.Sprintf("a%d", app)).
			SpreadConstraint(1, zone, DoNotSchedule, map[string]string{"app": fmt.Sprintf("a%d", app)}).Obj()
		run := func(indexed bool) *preFilterState {
			useIndex = indexed
			defer func() { useIndex = true }()
			state := framework.NewCycleState()
			if _, s := p.PreFilter(context.Background(), state, pod, snap.List()); !s.IsSuccess() {
				t.Fatal(s)
			}
			s, _ := framework.ReadAs[*preFilterState](state, preFilterStateKey)
			return s
		}
		fast, slow := run(true), run(false)
		if !maps.Equal(fast.TpValueToMatchNum[0], slow.TpValueToMatchNum[0]) || fast.minMatch[0] != slow.minMatch[0] {
			t.Errorf("app a%d: indexed %v (min %d), walked %v (min %d)", app, fast.TpValueToMatchNum[0], fast.minMatch[0], slow.TpValueToMatchNum[0], slow.minMatch[0])
		}
	}
}
