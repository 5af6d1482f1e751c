package nodelifecycle

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

func newFixture(t *testing.T) (*ctltest.Fixture, *Controller) {
	t.Helper()
	f := ctltest.NewFixture(t)
	nc, err := New(f.Context)
	if err != nil {
		t.Fatal(err)
	}
	return f, nc
}

func TestNodeThatStopsRenewingItsLeaseBecomesUnreachable(t *testing.T) {
	f, nc := newFixture(t)
	ctx := context.Background()
	t0 := ctltest.Epoch
	f.Add(ctltest.MakeNode().Condition("Ready", "True", t0).Obj(), ctltest.Lease("n1", t0),
		ctltest.MakePod().Name("web-1").Node("n1").Ready(t0).Obj())

	nc.MonitorNodeHealth(ctx)
	f.Clock.Step(30 * time.Second)
	f.Add(ctltest.Lease("n1", f.Clock.Now())) // renewed
	nc.MonitorNodeHealth(ctx)
	f.Clock.Step(39 * time.Second) // 39 s after the last renewal: still within the grace
	nc.MonitorNodeHealth(ctx)
	f.ExpectWrites()

	f.Clock.Step(2 * time.Second)
	nc.MonitorNodeHealth(ctx)
	f.ExpectWrites("update-status nodes n1", "update-status pods default/web-1", "update nodes n1")
	node := f.Conn.Object("nodes", "", "n1").(*corev1.Node)
	rc := readyCondition(node)
	if rc.GetStatus() != "Unknown" || rc.GetReason() != "NodeStatusUnknown" || rc.GetMessage() != "Kubelet stopped posting node status." {
		t.Errorf("Ready = %v", rc)
	}
	if len(node.Status.Conditions) != 4 {
		t.Errorf("conditions = %v, want Ready and the three pressures Unknown", node.Status.Conditions)
	}
	taints := node.GetSpec().GetTaints()
	if len(taints) != 1 || taints[0].GetKey() != TaintUnreachable || taints[0].GetEffect() != "NoExecute" || taints[0].GetTimeAdded().GetSeconds() != f.Clock.Now().Unix() {
		t.Errorf("taints = %v", taints)
	}
	pod := f.Conn.Object("pods", "default", "web-1").(*corev1.Pod)
	if pc := pod.GetStatus().GetConditions()[0]; pc.GetStatus() != "False" {
		t.Errorf("pod Ready = %s, want False", pc.GetStatus())
	}
}

func TestNodeReportingNotReadyIsTaintedNotReadyAndUntaintedWhenReady(t *testing.T) {
	f, nc := newFixture(t)
	ctx := context.Background()
	t0 := ctltest.Epoch
	f.Add(ctltest.MakeNode().Condition("Ready", "False", t0).Obj(), ctltest.Lease("n1", t0))
	nc.MonitorNodeHealth(ctx)
	f.ExpectWrites("update nodes n1")
	node := f.Conn.Object("nodes", "", "n1").(*corev1.Node)
	if tt := node.GetSpec().GetTaints(); len(tt) != 1 || tt[0].GetKey() != TaintNotReady {
		t.Fatalf("taints = %v", tt)
	}
	// The kubelet reports Ready again.
	node.Status.Conditions[0].Status = "True"
	f.Add(node)
	f.Conn.ClearActions()
	nc.MonitorNodeHealth(ctx)
	f.ExpectWrites("update nodes n1")
	if tt := f.Conn.Object("nodes", "", "n1").(*corev1.Node).GetSpec().GetTaints(); len(tt) != 0 {
		t.Errorf("taints = %v, want none", tt)
	}
}

func TestNodeThatNeverReportedIsUnknownAfterStartupGrace(t *testing.T) {
	f, nc := newFixture(t)
	ctx := context.Background()
	f.Add(ctltest.MakeNode().Obj())
	nc.MonitorNodeHealth(ctx)
	f.Clock.Step(45 * time.Second)
	nc.MonitorNodeHealth(ctx)
	f.ExpectWrites() // within the 60 s startup grace
	f.Clock.Step(20 * time.Second)
	nc.MonitorNodeHealth(ctx)
	f.ExpectWrites("update-status nodes n1", "update nodes n1")
	if rc := readyCondition(f.Conn.Object("nodes", "", "n1").(*corev1.Node)); rc.GetReason() != "NodeStatusNeverUpdated" {
		t.Errorf("Ready = %v", rc)
	}
}

func TestEviction(t *testing.T) {
	t0 := ctltest.Epoch
	secs := func(s int64) *int64 { return proto.Int64(s) }
	tainted := ctltest.MakeNode().Condition("Ready", "Unknown", t0).Taint(TaintUnreachable, "NoExecute", t0).Obj()
	tests := []struct {
		name      string
		pod       *corev1.Pod
		wantEvict bool
		wantAfter time.Duration
	}{
		{"no toleration: at once", ctltest.MakePod().Name("p").Node("n1").Obj(), true, 0},
		{"tolerates for 300 s", ctltest.MakePod().Name("p").Node("n1").Toleration(TaintUnreachable, "NoExecute", secs(300)).Obj(), false, 300 * time.Second},
		{"tolerates for ever", ctltest.MakePod().Name("p").Node("n1").Toleration(TaintUnreachable, "NoExecute", nil).Obj(), false, 0},
		{"tolerates another taint only", ctltest.MakePod().Name("p").Node("n1").Toleration(TaintNotReady, "NoExecute", nil).Obj(), true, 0},
		{"tolerates everything", ctltest.MakePod().Name("p").Node("n1").Toleration("", "", nil).Obj(), false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, nc := newFixture(t)
			f.Add(tainted, tt.pod)
			if err := nc.SyncPod(context.Background(), "default/p"); err != nil {
				t.Fatal(err)
			}
			if tt.wantEvict {
				f.ExpectWrites("delete pods default/p")
				f.ExpectEvents("Normal TaintManagerEviction Marking for deletion Pod default/p")
			} else {
				f.ExpectWrites()
			}
			if tt.wantAfter > 0 {
				f.Clock.Step(tt.wantAfter - time.Second)
				if err := nc.SyncPod(context.Background(), "default/p"); err != nil {
					t.Fatal(err)
				}
				f.ExpectWrites()
				f.Clock.Step(time.Second)
				if err := nc.SyncPod(context.Background(), "default/p"); err != nil {
					t.Fatal(err)
				}
				f.ExpectWrites("delete pods default/p")
			}
		})
	}
}

func TestTaintChangeQueuesThePodsOfTheNode(t *testing.T) {
	f, nc := newFixture(t)
	f.Add(ctltest.MakePod().Name("a").Node("n1").Obj(), ctltest.MakePod().Name("b").Node("n1").Obj(),
		ctltest.MakePod().Name("c").Node("n2").Obj())
	nc.enqueuePodsOn("n1")
	var keys []string
	for nc.queue.Len() > 0 {
		k, _ := nc.queue.Get()
		keys = append(keys, k)
		nc.queue.Done(k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"default/a", "default/b"}) {
		t.Errorf("queued %v", keys)
	}
}

func TestObserveUsesTheControllersClock(t *testing.T) {
	t0 := ctltest.Epoch
	node := ctltest.MakeNode().Condition("Ready", "True", t0.Add(-time.Hour)).Obj() // the node's clock is an hour behind
	h := observe(nil, node, nil, t0)
	if h.overdue(t0.Add(40*time.Second), 40*time.Second) {
		t.Error("a node seen for the first time is overdue at once")
	}
	h = observe(h, node, nil, t0.Add(30*time.Second))
	if !h.probe.Equal(t0) {
		t.Error("an unchanged heartbeat moved the probe time")
	}
	h = observe(h, node, ctltest.Lease("n1", t0.Add(-time.Hour)), t0.Add(35*time.Second))
	if !h.probe.Equal(t0.Add(35 * time.Second)) {
		t.Error("a lease seen renewed did not move the probe time")
	}
}
