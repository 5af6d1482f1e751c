package queue

import (
	"context"
	"testing"
	"time"

	"podline.dev/pkg/clock"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/internal/framework/runtime"
	"podline.dev/services/scheduler/internal/profile"
	"podline.dev/services/scheduler/plugins"
	st "podline.dev/services/scheduler/testing"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newQueue(t *testing.T, clk clock.Clock) *PriorityQueue {
	t.Helper()
	cfg := profile.Default()
	fw, err := runtime.NewFramework(context.Background(), plugins.NewInTreeRegistry(), &cfg.Profiles[0])
	if err != nil {
		t.Fatal(err)
	}
	return New(fw.QueueSortFunc(), []Profile{fw}, WithClock(clk))
}

func pop(t *testing.T, q *PriorityQueue) *framework.QueuedPodInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	pi, err := q.Pop(ctx)
	if err != nil {
		t.Fatalf("Pop: %v", err)
	}
	return pi
}

// fail pops pod and reports it unschedulable by plugins, as the scheduler does.
func fail(t *testing.T, q *PriorityQueue, plugins ...string) *framework.QueuedPodInfo {
	t.Helper()
	pi := pop(t, q)
	cycle := q.SchedulingCycle()
	pi.UnschedulablePlugins = setOf(plugins...)
	if err := q.AddUnschedulableIfNotPresent(pi, cycle); err != nil {
		t.Fatal(err)
	}
	return pi
}

func TestActiveQOrdersByPriorityThenCreationTime(t *testing.T) {
	q := newQueue(t, clock.NewFake(t0))
	q.Add(st.MakePod().Name("old-low").Priority(1).Created(100).Obj())
	q.Add(st.MakePod().Name("new-high").Priority(10).Created(300).Obj())
	q.Add(st.MakePod().Name("old-high").Priority(10).Created(200).Obj())
	for _, want := range []string{"old-high", "new-high", "old-low"} {
		if got := pop(t, q).Pod.GetMetadata().GetName(); got != want {
			t.Fatalf("popped %s, want %s", got, want)
		}
	}
}

func TestBackoffDoublesFromOneSecondToTen(t *testing.T) {
	clk := clock.NewFake(t0)
	q := newQueue(t, clk)
	q.Add(st.MakePod().Name("p").Obj())
	want := []time.Duration{1, 2, 4, 8, 10, 10}
	for i, w := range want {
		// An error (no unschedulable plugins) sends the pod to backoffQ.
		pi := pop(t, q)
		if pi.Attempts != i+1 {
			t.Fatalf("attempts = %d, want %d", pi.Attempts, i+1)
		}
		if err := q.AddUnschedulableIfNotPresent(pi, q.SchedulingCycle()); err != nil {
			t.Fatal(err)
		}
		if got := q.Where("default", "p"); got != "backoff" {
			t.Fatalf("attempt %d: pod in %q, want backoff", i+1, got)
		}
		clk.Step(w*time.Second - time.Millisecond)
		q.flushBackoffCompleted()
		if got := q.Where("default", "p"); got != "backoff" {
			t.Fatalf("attempt %d: left backoff before %v", i+1, w*time.Second)
		}
		clk.Step(time.Millisecond)
		q.flushBackoffCompleted()
		if got := q.Where("default", "p"); got != "active" {
			t.Fatalf("attempt %d: pod in %q after %v, want active", i+1, got, w*time.Second)
		}
	}
}

func TestUnschedulablePodMovesToActiveWhenAFittingNodeAppears(t *testing.T) {
	clk := clock.NewFake(t0)
	q := newQueue(t, clk)
	q.Add(st.MakePod().Name("big").Req("4", "1Gi").Obj())
	fail(t, q, "NodeResourcesFit")
	if got := q.Where("default", "big"); got != "unschedulable" {
		t.Fatalf("pod in %q, want unschedulable", got)
	}
	clk.Step(10 * time.Second) // past its backoff

	small := st.MakeNode().Name("small").Capacity("2", "4Gi").Obj()
	q.MoveAllToActiveOrBackoffQueue(framework.EventNodeAdd, nil, small, nil)
	if got := q.Where("default", "big"); got != "unschedulable" {
		t.Fatalf("a node too small moved the pod to %q", got)
	}
	tainted := st.MakeNode().Name("tainted").Capacity("8", "16Gi").Obj()
	q.MoveAllToActiveOrBackoffQueue(framework.NodeUpdateEvent(st.MakeNode().Name("tainted").Obj(), st.MakeNode().Name("tainted").Label("x", "y").Obj()), nil, tainted, nil)
	if got := q.Where("default", "big"); got != "unschedulable" {
		t.Fatalf("a label change (NodeResourcesFit does not care) moved the pod to %q", got)
	}
	big := st.MakeNode().Name("big").Capacity("8", "16Gi").Obj()
	q.MoveAllToActiveOrBackoffQueue(framework.EventNodeAdd, nil, big, nil)
	if got := q.Where("default", "big"); got != "active" {
		t.Fatalf("after a fitting node appeared the pod is in %q, want active", got)
	}
}

func TestEventDuringBackoffGoesToBackoffQ(t *testing.T) {
	clk := clock.NewFake(t0)
	q := newQueue(t, clk)
	q.Add(st.MakePod().Name("p").Obj())
	fail(t, q, "TaintToleration")
	tainted := st.MakeNode().Name("n").Taint("a", "", "NoSchedule").Obj()
	clean := st.MakeNode().Name("n").Obj()
	q.MoveAllToActiveOrBackoffQueue(framework.NodeUpdateEvent(tainted, clean), tainted, clean, nil)
	if got := q.Where("default", "p"); got != "backoff" {
		t.Fatalf("pod in %q, want backoff (still within its 1s backoff)", got)
	}
	clk.Step(time.Second)
	q.flushBackoffCompleted()
	if got := q.Where("default", "p"); got != "active" {
		t.Fatalf("pod in %q, want active", got)
	}
}

func TestTaintAddedDoesNotMoveThePod(t *testing.T) {
	clk := clock.NewFake(t0)
	q := newQueue(t, clk)
	q.Add(st.MakePod().Name("p").Obj())
	fail(t, q, "TaintToleration")
	a := st.MakeNode().Name("n").Taint("a", "", "NoSchedule").Obj()
	ab := st.MakeNode().Name("n").Taint("a", "", "NoSchedule").Taint("b", "", "NoSchedule").Obj()
	q.MoveAllToActiveOrBackoffQueue(framework.NodeUpdateEvent(a, ab), a, ab, nil)
	if got := q.Where("default", "p"); got != "unschedulable" {
		t.Fatalf("pod in %q, want unschedulable", got)
	}
}

func TestFailureDuringAMoveRequestGoesToBackoffQ(t *testing.T) {
	clk := clock.NewFake(t0)
	q := newQueue(t, clk)
	q.Add(st.MakePod().Name("p").Obj())
	pi := pop(t, q)
	cycle := q.SchedulingCycle()
	// While the pod was being scheduled, a node appeared.
	q.MoveAllToActiveOrBackoffQueue(framework.EventNodeAdd, nil, st.MakeNode().Name("n").Obj(), nil)
	pi.UnschedulablePlugins = setOf("NodeResourcesFit")
	if err := q.AddUnschedulableIfNotPresent(pi, cycle); err != nil {
		t.Fatal(err)
	}
	if got := q.Where("default", "p"); got != "backoff" {
		t.Fatalf("pod in %q, want backoff", got)
	}
}

func TestPeriodicFlushMovesPodsAfterFiveMinutes(t *testing.T) {
	clk := clock.NewFake(t0)
	q := newQueue(t, clk)
	q.Add(st.MakePod().Name("p").Obj())
	fail(t, q, "NodeResourcesFit")
	clk.Step(5 * time.Minute)
	q.flushUnschedulableLeftover()
	if got := q.Where("default", "p"); got != "unschedulable" {
		t.Fatalf("pod in %q at exactly 5 minutes", got)
	}
	clk.Step(time.Second)
	q.flushUnschedulableLeftover()
	if got := q.Where("default", "p"); got != "active" {
		t.Fatalf("pod in %q after 5 minutes, want active", got)
	}
}

func TestRunFlushesOnTheInjectedClock(t *testing.T) {
	clk := clock.NewFake(t0)
	q := newQueue(t, clk)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); q.Run(ctx) }()
	defer func() { cancel(); <-done }()
	q.Add(st.MakePod().Name("p").Obj())
	pi := pop(t, q)
	if err := q.AddUnschedulableIfNotPresent(pi, q.SchedulingCycle()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for q.Where("default", "p") != "active" {
		if time.Now().After(deadline) {
			t.Fatal("Run never moved the pod out of backoff")
		}
		clk.Step(100 * time.Millisecond)
		time.Sleep(time.Millisecond)
	}
	if got := clk.Since(t0); got < time.Second {
		t.Errorf("moved after %v of fake time, before its 1s backoff", got)
	}
}

func TestGatedPodEntersActiveQWhenItsGatesAreRemoved(t *testing.T) {
	q := newQueue(t, clock.NewFake(t0))
	gated := st.MakePod().Name("g").SchedulingGate("x").Obj()
	q.Add(gated)
	if got := q.Where("default", "g"); got != "gated" {
		t.Fatalf("pod in %q, want gated", got)
	}
	q.MoveAllToActiveOrBackoffQueue(framework.EventForceActivate, nil, nil, nil)
	if got := q.Where("default", "g"); got != "gated" {
		t.Fatalf("events must not move a gated pod: in %q", got)
	}
	open := st.MakePod().Name("g").Obj()
	q.Update(gated, open)
	if got := q.Where("default", "g"); got != "active" {
		t.Fatalf("pod in %q after its gates were removed, want active", got)
	}
	if l := q.Len(); l.Active != 1 || l.Gated != 0 {
		t.Errorf("lengths = %+v", l)
	}
}

func TestStatusOnlyUpdateKeepsThePodInThePool(t *testing.T) {
	q := newQueue(t, clock.NewFake(t0))
	p := st.MakePod().Name("p").Obj()
	q.Add(p)
	fail(t, q, "NodeResourcesFit")
	withStatus := st.MakePod().Name("p").Obj()
	withStatus.Status.Conditions = []*corev1.PodCondition{{Type: "PodScheduled", Status: "False"}}
	withStatus.Metadata.Annotations = map[string]string{"podline.dev/traceparent": "00-1-2-01"}
	q.Update(p, withStatus)
	if got := q.Where("default", "p"); got != "unschedulable" {
		t.Fatalf("pod in %q, want unschedulable", got)
	}
	relabelled := st.MakePod().Name("p").Label("x", "y").Obj()
	q.Update(withStatus, relabelled)
	if got := q.Where("default", "p"); got != "backoff" {
		t.Fatalf("pod in %q after a spec/label change, want backoff", got)
	}
}

func TestNominator(t *testing.T) {
	q := newQueue(t, clock.NewFake(t0))
	p := st.MakePod().Name("p").Priority(10).Obj()
	q.Add(p)
	pi := pop(t, q)
	q.AddNominatedPod(pi.PodInfo, &framework.NominatingInfo{NominatedNodeName: "n1", NominatingMode: framework.ModeOverride})
	if got := q.NominatedPodsForNode("n1"); len(got) != 1 || got[0].Pod.GetMetadata().GetName() != "p" {
		t.Fatalf("nominated = %v", got)
	}
	q.Delete(p)
	if got := q.NominatedPodsForNode("n1"); len(got) != 0 {
		t.Fatalf("nominated after delete = %v", got)
	}
}
