package defaultpreemption

import (
	"context"
	"slices"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/cache"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/internal/framework/runtime"
	"podline.dev/services/scheduler/internal/profile"
	"podline.dev/services/scheduler/plugins/defaultbinder"
	"podline.dev/services/scheduler/plugins/noderesourcesfit"
	"podline.dev/services/scheduler/plugins/prioritysort"
	"podline.dev/services/scheduler/plugins/tainttoleration"
	st "podline.dev/services/scheduler/testing"
)

// setup builds a framework (PrioritySort, TaintToleration, NodeResourcesFit,
// DefaultPreemption, DefaultBinder) over a snapshot of nodes and pods.
func setup(t *testing.T, nodes []*corev1.Node, pods []*corev1.Pod) (*runtime.Framework, *DefaultPreemption, *cache.Snapshot) {
	t.Helper()
	snap := st.Snapshot(nodes, pods)
	reg := runtime.Registry{
		prioritysort.Name: prioritysort.New, noderesourcesfit.Name: noderesourcesfit.New,
		tainttoleration.Name: tainttoleration.New, Name: New, defaultbinder.Name: defaultbinder.New,
	}
	p := &profile.Profile{SchedulerName: "default-scheduler", Plugins: &profile.Plugins{MultiPoint: profile.PluginSet{Enabled: []profile.Plugin{
		{Name: prioritysort.Name}, {Name: tainttoleration.Name}, {Name: noderesourcesfit.Name}, {Name: Name}, {Name: defaultbinder.Name}}}}}
	fw, err := runtime.NewFramework(context.Background(), reg, p, runtime.WithSnapshotSharedLister(snap))
	if err != nil {
		t.Fatal(err)
	}
	pl, _ := New(context.Background(), nil, fw)
	dp := pl.(*DefaultPreemption)
	dp.offset = func(int) int { return 0 }
	return fw, dp, snap
}

// filterAll runs PreFilter and Filter on every node, as the scheduler does before PostFilter.
func filterAll(t *testing.T, fw *runtime.Framework, snap *cache.Snapshot, pod *corev1.Pod) (*framework.CycleState, framework.NodeToStatus) {
	t.Helper()
	state := framework.NewCycleState()
	if _, s := fw.RunPreFilterPlugins(context.Background(), state, pod, snap.List()); !s.IsSuccess() {
		t.Fatal(s)
	}
	m := framework.NodeToStatus{}
	for _, ni := range snap.List() {
		if s := fw.RunFilterPlugins(context.Background(), state, pod, ni); !s.IsSuccess() {
			m[ni.Name()] = s
		}
	}
	return state, m
}

func TestSelectVictimsOnNodeReprievesTheMostImportantFirst(t *testing.T) {
	node := st.MakeNode().Name("n1").Capacity("4", "8Gi").Obj()
	pods := []*corev1.Pod{
		st.MakePod().Name("low1").Priority(1).StartTime(100).Req("1", "").Node("n1").Obj(),
		st.MakePod().Name("low2").Priority(2).StartTime(100).Req("2", "").Node("n1").Obj(),
		st.MakePod().Name("high").Priority(100).Req("1", "").Node("n1").Obj(),
	}
	fw, dp, snap := setup(t, []*corev1.Node{node}, pods)
	preemptor := st.MakePod().Name("p").Priority(50).Req("2", "").Obj()
	state, _ := filterAll(t, fw, snap, preemptor)
	ni, _ := snap.Get("n1")
	victims, s := dp.SelectVictimsOnNode(context.Background(), state, preemptor, ni.Clone())
	if !s.IsSuccess() {
		t.Fatal(s)
	}
	// Without low1 and low2 there are 3 cpus free; low2 (more important) is
	// tried first and does not fit back; low1 does.
	if len(victims) != 1 || victims[0].Pod.GetMetadata().GetName() != "low2" {
		t.Errorf("victims = %v, want [low2]", podNames(victims))
	}
}

func podNames(pis []*framework.PodInfo) []string {
	var out []string
	for _, pi := range pis {
		out = append(out, pi.Pod.GetMetadata().GetName())
	}
	return out
}

func TestPostFilterMessages(t *testing.T) {
	small := func(name string) *corev1.Node { return st.MakeNode().Name(name).Capacity("1", "4Gi").Obj() }
	tests := []struct {
		name  string
		nodes []*corev1.Node
		pods  []*corev1.Pod
		pod   *corev1.Pod
		want  string
		node  string
	}{
		{
			name:  "no lower-priority pods anywhere",
			nodes: []*corev1.Node{small("n1"), small("n2")},
			pods:  []*corev1.Pod{st.MakePod().Name("x").Priority(10).Req("1", "").Node("n1").Obj()},
			pod:   st.MakePod().Name("p").Priority(10).Req("1", "").Obj(),
			want:  "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.",
		},
		{
			name: "a tainted node is counted with the others (podline's wording)",
			nodes: []*corev1.Node{st.MakeNode().Name("cp").Capacity("8", "8Gi").Taint("node-role.kubernetes.io/control-plane", "", "NoSchedule").Obj(),
				small("n1"), small("n2")},
			pod:  st.MakePod().Name("p").Req("2", "").Obj(),
			want: "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
		},
		{
			name:  "preemption does not help when the pod is too big even alone",
			nodes: []*corev1.Node{small("n1")},
			pods:  []*corev1.Pod{st.MakePod().Name("x").Priority(0).Req("1", "").Node("n1").Obj()},
			pod:   st.MakePod().Name("p").Priority(10).Req("2", "").Obj(),
			want:  "preemption: 0/1 nodes are available: 1 Insufficient cpu.",
		},
		{
			name:  "preemptionPolicy Never",
			nodes: []*corev1.Node{small("n1")},
			pods:  []*corev1.Pod{st.MakePod().Name("x").Priority(0).Req("1", "").Node("n1").Obj()},
			pod:   st.MakePod().Name("p").Priority(10).PreemptionPolicy("Never").Req("1", "").Obj(),
			want:  "preemption: not eligible due to preemptionPolicy=Never.",
		},
		{
			name:  "earlier victims still terminating on the nominated node",
			nodes: []*corev1.Node{small("n1")},
			pods:  []*corev1.Pod{st.MakePod().Name("x").Priority(0).Req("1", "").Node("n1").Terminating().Obj()},
			pod:   st.MakePod().Name("p").Priority(10).NominatedNodeName("n1").Req("1", "").Obj(),
			want:  "preemption: not eligible due to a terminating pod on the nominated node.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fw, _, snap := setup(t, tt.nodes, tt.pods)
			state, m := filterAll(t, fw, snap, tt.pod)
			_, s := fw.RunPostFilterPlugins(context.Background(), state, tt.pod, m)
			if s.Message() != tt.want {
				t.Errorf("message = %q\nwant      %q", s.Message(), tt.want)
			}
		})
	}
}

func TestFindCandidates(t *testing.T) {
	nodes := []*corev1.Node{
		st.MakeNode().Name("n1").Capacity("2", "4Gi").Obj(),
		st.MakeNode().Name("n2").Capacity("2", "4Gi").Obj(),
		st.MakeNode().Name("n3").Capacity("2", "4Gi").Obj(),
	}
	pods := []*corev1.Pod{
		st.MakePod().Name("a").Priority(5).Req("2", "").Node("n1").Obj(),
		st.MakePod().Name("b").Priority(1).Req("1", "").Node("n2").Obj(),
		st.MakePod().Name("c").Priority(1).Req("1", "").Node("n2").Obj(),
		st.MakePod().Name("d").Priority(100).Req("2", "").Node("n3").Obj(),
	}
	fw, dp, snap := setup(t, nodes, pods)
	pod := st.MakePod().Name("p").Priority(10).Req("2", "").Obj()
	state, m := filterAll(t, fw, snap, pod)
	cs, statuses, err := dp.FindCandidates(context.Background(), state, pod, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 {
		t.Fatalf("candidates = %+v", cs)
	}
	if s := statuses["n3"]; s.Message() != "No preemption victims found for incoming pod" {
		t.Errorf("n3 = %v", s)
	}
	best := SelectCandidate(cs)
	// n1's victim has priority 5, n2's have priority 1: n2 wins on the highest victim priority.
	if best.Node != "n2" || !slices.Equal(podNames(best.Victims), []string{"b", "c"}) && !slices.Equal(podNames(best.Victims), []string{"c", "b"}) {
		t.Errorf("best = %s %v", best.Node, podNames(best.Victims))
	}
}

func TestSelectCandidate(t *testing.T) {
	v := func(name string, prio int32, start int64) *framework.PodInfo {
		return framework.NewPodInfo(st.MakePod().Name(name).Priority(prio).StartTime(start).Obj())
	}
	tests := []struct {
		name string
		cs   []Candidate
		want string
	}{
		{"lowest highest priority", []Candidate{{Node: "a", Victims: []*framework.PodInfo{v("x", 5, 1)}}, {Node: "b", Victims: []*framework.PodInfo{v("y", 3, 1), v("z", 3, 1)}}}, "b"},
		{"then lowest sum", []Candidate{{Node: "a", Victims: []*framework.PodInfo{v("x", 5, 1), v("y", 4, 1)}}, {Node: "b", Victims: []*framework.PodInfo{v("z", 5, 1), v("w", 1, 1)}}}, "b"},
		{"then fewest", []Candidate{{Node: "a", Victims: []*framework.PodInfo{v("x", 0, 1), v("y", 0, 1)}}, {Node: "b", Victims: []*framework.PodInfo{v("z", 0, 1)}}}, "b"},
		{"then latest start", []Candidate{{Node: "a", Victims: []*framework.PodInfo{v("x", 1, 100)}}, {Node: "b", Victims: []*framework.PodInfo{v("y", 1, 200)}}}, "b"},
		{"then the first", []Candidate{{Node: "a", Victims: []*framework.PodInfo{v("x", 1, 100)}}, {Node: "b", Victims: []*framework.PodInfo{v("y", 1, 100)}}}, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SelectCandidate(tt.cs).Node; got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
