package runtime_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/internal/framework/runtime"
	"podline.dev/services/scheduler/internal/profile"
	"podline.dev/services/scheduler/plugins"
	st "podline.dev/services/scheduler/testing"
)

// fakePlugin implements every extension point with canned answers.
type fakePlugin struct {
	name       string
	filter     map[string]*framework.Status
	score      map[string]int64
	permit     *framework.Status
	permitWait time.Duration
	preFilter  *framework.PreFilterResult
	reserved   []string
}

func (f *fakePlugin) Name() string { return f.name }
func (f *fakePlugin) PreFilter(context.Context, *framework.CycleState, *corev1.Pod, []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	return f.preFilter, nil
}
func (f *fakePlugin) PreFilterExtensions() framework.PreFilterExtensions { return nil }
func (f *fakePlugin) Filter(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, ni *framework.NodeInfo) *framework.Status {
	return f.filter[ni.Name()]
}
func (f *fakePlugin) Score(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, ni *framework.NodeInfo) (int64, *framework.Status) {
	return f.score[ni.Name()], nil
}
func (f *fakePlugin) ScoreExtensions() framework.ScoreExtensions { return nil }
func (f *fakePlugin) Reserve(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, n string) *framework.Status {
	f.reserved = append(f.reserved, "reserve "+n)
	return nil
}
func (f *fakePlugin) Unreserve(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, n string) {
	f.reserved = append(f.reserved, "unreserve "+n)
}
func (f *fakePlugin) Permit(context.Context, *framework.CycleState, *corev1.Pod, string) (*framework.Status, time.Duration) {
	return f.permit, f.permitWait
}

func build(t *testing.T, fakes []*fakePlugin, weights map[string]int32, points ...string) *runtime.Framework {
	t.Helper()
	reg := plugins.NewInTreeRegistry()
	var enabled []profile.Plugin
	for _, f := range fakes {
		reg[f.name] = func(context.Context, json.RawMessage, framework.Handle) (framework.Plugin, error) { return f, nil }
		enabled = append(enabled, profile.Plugin{Name: f.name, Weight: weights[f.name]})
	}
	p := &profile.Profile{SchedulerName: "test", Plugins: &profile.Plugins{MultiPoint: profile.PluginSet{Enabled: append([]profile.Plugin{
		{Name: "PrioritySort"}, {Name: "DefaultBinder"}}, enabled...)}}}
	fw, err := runtime.NewFramework(context.Background(), reg, p)
	if err != nil {
		t.Fatal(err)
	}
	return fw
}

func nodes(names ...string) []*framework.NodeInfo {
	var out []*framework.NodeInfo
	for _, n := range names {
		out = append(out, st.NodeInfo(st.MakeNode().Name(n).Obj()))
	}
	return out
}

func TestFilterStopsAtTheFirstRejectionAndNamesThePlugin(t *testing.T) {
	a := &fakePlugin{name: "A", filter: map[string]*framework.Status{"n1": framework.NewStatus(framework.Unschedulable, "a says no")}}
	b := &fakePlugin{name: "B", filter: map[string]*framework.Status{"n1": framework.NewStatus(framework.Unschedulable, "b says no"),
		"n2": framework.NewStatus(framework.Error, "b broke")}}
	fw := build(t, []*fakePlugin{a, b}, nil)
	pod := st.MakePod().Name("p").Obj()
	ns := nodes("n1", "n2", "n3")
	if s := fw.RunFilterPlugins(context.Background(), framework.NewCycleState(), pod, ns[0]); s.Message() != "a says no" || s.Plugin() != "A" {
		t.Errorf("n1: %v", s)
	}
	if s := fw.RunFilterPlugins(context.Background(), framework.NewCycleState(), pod, ns[1]); s.Code() != framework.Error || s.Plugin() != "B" ||
		s.Message() != `running "B" filter plugin: b broke` {
		t.Errorf("n2: %v", s)
	}
	if s := fw.RunFilterPlugins(context.Background(), framework.NewCycleState(), pod, ns[2]); !s.IsSuccess() {
		t.Errorf("n3: %v", s)
	}
}

func TestScoreAppliesWeights(t *testing.T) {
	a := &fakePlugin{name: "A", score: map[string]int64{"n1": 10, "n2": 50}}
	b := &fakePlugin{name: "B", score: map[string]int64{"n1": 100, "n2": 0}}
	fw := build(t, []*fakePlugin{a, b}, map[string]int32{"A": 3})
	got, s := fw.RunScorePlugins(context.Background(), framework.NewCycleState(), st.MakePod().Name("p").Obj(), nodes("n1", "n2"))
	if !s.IsSuccess() {
		t.Fatal(s)
	}
	if got[0].TotalScore != 130 || got[1].TotalScore != 150 || got[0].Scores[0] != (runtime.PluginScore{Name: "A", Score: 30}) {
		t.Errorf("scores = %+v", got)
	}
}

func TestScoreOutOfRangeIsAnError(t *testing.T) {
	a := &fakePlugin{name: "A", score: map[string]int64{"n1": 101}}
	fw := build(t, []*fakePlugin{a}, nil)
	if _, s := fw.RunScorePlugins(context.Background(), framework.NewCycleState(), st.MakePod().Name("p").Obj(), nodes("n1")); s.Code() != framework.Error {
		t.Errorf("status = %v, want Error", s)
	}
}

func TestPreFilterResultsIntersect(t *testing.T) {
	a := &fakePlugin{name: "A", preFilter: &framework.PreFilterResult{NodeNames: map[string]bool{"n1": true}}}
	b := &fakePlugin{name: "B", preFilter: &framework.PreFilterResult{NodeNames: map[string]bool{"n2": true}}}
	fw := build(t, []*fakePlugin{a, b}, nil)
	_, s := fw.RunPreFilterPlugins(context.Background(), framework.NewCycleState(), st.MakePod().Name("p").Obj(), nodes("n1", "n2"))
	if s.Code() != framework.UnschedulableAndUnresolvable || s.Message() != "node(s) didn't satisfy plugin(s) [A B] simultaneously" {
		t.Errorf("status = %v", s)
	}
}

func TestPermitWaitThenAllow(t *testing.T) {
	a := &fakePlugin{name: "A", permit: framework.NewStatus(framework.Wait), permitWait: time.Minute}
	fw := build(t, []*fakePlugin{a}, nil)
	pod := st.MakePod().Name("p").Obj()
	if s := fw.RunPermitPlugins(context.Background(), framework.NewCycleState(), pod, "n1"); !s.IsWait() {
		t.Fatalf("Permit = %v, want Wait", s)
	}
	done := make(chan *framework.Status)
	go func() { done <- fw.WaitOnPermit(context.Background(), pod) }()
	wp := fw.GetWaitingPod(pod.GetMetadata().GetUid())
	if wp == nil {
		t.Fatal("no waiting pod")
	}
	wp.Allow("A")
	if s := <-done; !s.IsSuccess() {
		t.Errorf("WaitOnPermit = %v", s)
	}
}

func TestPermitWaitTimesOut(t *testing.T) {
	a := &fakePlugin{name: "A", permit: framework.NewStatus(framework.Wait), permitWait: 20 * time.Millisecond}
	fw := build(t, []*fakePlugin{a}, nil)
	pod := st.MakePod().Name("p").Obj()
	fw.RunPermitPlugins(context.Background(), framework.NewCycleState(), pod, "n1")
	s := fw.WaitOnPermit(context.Background(), pod)
	if s.Code() != framework.Unschedulable || s.Message() != "rejected due to timeout after waiting 20ms at plugin A" {
		t.Errorf("WaitOnPermit = %v", s)
	}
}

func TestReserveAndUnreserveRunInOppositeOrders(t *testing.T) {
	a := &fakePlugin{name: "A"}
	fw := build(t, []*fakePlugin{a}, nil)
	pod := st.MakePod().Name("p").Obj()
	fw.RunReservePluginsReserve(context.Background(), framework.NewCycleState(), pod, "n1")
	fw.RunReservePluginsUnreserve(context.Background(), framework.NewCycleState(), pod, "n1")
	if len(a.reserved) != 2 || a.reserved[0] != "reserve n1" || a.reserved[1] != "unreserve n1" {
		t.Errorf("calls = %v", a.reserved)
	}
}
