package test

import (
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	schedulingv1 "podline.dev/proto/scheduling/v1"
	st "podline.dev/services/scheduler/testing"
)

const zone = "topology.kubernetes.io/zone"

func TestThreePodsSpreadAcrossThreeZones(t *testing.T) {
	e := start(t)
	for i, z := range []string{"a", "b", "c"} {
		e.createNode(st.MakeNode().Name("node-"+string(rune('1'+i))).Zone(z).Capacity("4", "8Gi").Obj())
	}
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		e.createPod(st.MakePod().Name(name).Label("app", "web").Req("100m", "64Mi").
			SpreadConstraint(1, zone, "DoNotSchedule", map[string]string{"app": "web"}).Obj())
	}
	zones := map[string]string{"node-1": "a", "node-2": "b", "node-3": "c"}
	seen := map[string]string{}
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		node := e.waitBound(name, 10*time.Second)
		if other, dup := seen[zones[node]]; dup {
			t.Errorf("%s and %s are both in zone %s", other, name, zones[node])
		}
		seen[zones[node]] = name
	}
}

// The message of the issue, exactly: one tainted control-plane node and two
// nodes too small, and no lower-priority pods to preempt.
const wantFitMessage = "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient cpu. " +
	"preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."

func TestPodThatFitsNowhereGetsKubernetesMessage(t *testing.T) {
	e := start(t)
	e.createNode(st.MakeNode().Name("control-plane").Capacity("8", "16Gi").Taint("node-role.kubernetes.io/control-plane", "", "NoSchedule").Obj())
	e.createNode(st.MakeNode().Name("node-1").Capacity("1", "4Gi").Obj())
	e.createNode(st.MakeNode().Name("node-2").Capacity("1", "4Gi").Obj())
	e.createPod(st.MakePod().Name("big").Req("2", "1Gi").Obj())

	var cond *corev1.PodCondition
	e.eventually(10*time.Second, "PodScheduled=False", func() bool {
		cond = condition(e.getPod("big"), "PodScheduled")
		return cond != nil
	})
	if cond.GetStatus() != "False" || cond.GetReason() != "Unschedulable" || cond.GetMessage() != wantFitMessage {
		t.Errorf("PodScheduled = %s/%s %q\nwant False/Unschedulable %q", cond.GetStatus(), cond.GetReason(), cond.GetMessage(), wantFitMessage)
	}
	var ev *corev1.Event
	e.eventually(10*time.Second, "FailedScheduling event", func() bool {
		ev = e.eventFor("FailedScheduling", "big")
		return ev != nil
	})
	if ev.GetMessage() != wantFitMessage || ev.GetType() != "Warning" {
		t.Errorf("event %s %q\nwant Warning %q", ev.GetType(), ev.GetMessage(), wantFitMessage)
	}
	if ev.GetReportingComponent() != "default-scheduler" || ev.GetSource().GetComponent() != "default-scheduler" {
		t.Errorf("event from %q/%q, want default-scheduler", ev.GetReportingComponent(), ev.GetSource().GetComponent())
	}
}

func TestScheduledEventAndCondition(t *testing.T) {
	e := start(t)
	e.createNode(st.MakeNode().Name("node-1").Capacity("2", "4Gi").Obj())
	e.createPod(st.MakePod().Name("web-x").Req("100m", "64Mi").Obj())
	if node := e.waitBound("web-x", 10*time.Second); node != "node-1" {
		t.Fatalf("bound to %q", node)
	}
	var ev *corev1.Event
	e.eventually(10*time.Second, "Scheduled event", func() bool {
		ev = e.eventFor("Scheduled", "web-x")
		return ev != nil
	})
	if ev.GetMessage() != "Successfully assigned default/web-x to node-1" || ev.GetType() != "Normal" ||
		ev.GetReportingComponent() != "default-scheduler" || ev.GetSource().GetComponent() != "default-scheduler" {
		t.Errorf("event = %s %q from %q/%q", ev.GetType(), ev.GetMessage(), ev.GetReportingComponent(), ev.GetSource().GetComponent())
	}
	if c := condition(e.getPod("web-x"), "PodScheduled"); c.GetStatus() != "True" {
		t.Errorf("PodScheduled = %v", c)
	}
}

func TestHighPriorityPodPreemptsLowPriorityPod(t *testing.T) {
	e := start(t)
	e.createNode(st.MakeNode().Name("node-1").Capacity("2", "4Gi").Obj())
	e.createPod(st.MakePod().Name("low").Priority(0).Req("1500m", "1Gi").Obj())
	e.waitBound("low", 10*time.Second)

	// The kubelet is not here: act as it would and finish terminating pods at once.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			p, err := e.pods.Get(e.ctx, "default", "low")
			if err == nil && p.GetMetadata().GetDeletionTimestamp() != nil {
				zero := int64(0)
				_, _ = e.pods.Delete(e.ctx, "default", "low", &metav1.DeleteOptions{GracePeriodSeconds: &zero})
			}
		}
	}()

	// Priority comes from a PriorityClass; the apiserver's Priority
	// admission fills spec.priority from it.
	if _, err := client.For[*schedulingv1.PriorityClass](e.s.Conn).Create(e.ctx,
		&schedulingv1.PriorityClass{Metadata: &metav1.ObjectMeta{Name: "high"}, Value: 100}); err != nil {
		t.Fatal(err)
	}
	highPod := st.MakePod().Name("high").Req("1500m", "1Gi").Obj()
	highPod.Spec.PriorityClassName = "high"
	high := e.createPod(highPod)
	e.eventually(10*time.Second, "the victim to be deleted", func() bool {
		_, err := e.pods.Get(e.ctx, "default", "low")
		return err != nil
	})
	if node := e.waitBound("high", 10*time.Second); node != "node-1" {
		t.Fatalf("preemptor bound to %q", node)
	}
	ev := e.eventFor("Preempted", "low")
	if ev == nil || ev.GetMessage() != "Preempted by pod "+high.GetMetadata().GetUid()+" on node node-1" {
		t.Errorf("Preempted event = %v", ev)
	}
	fs := e.eventFor("FailedScheduling", "high")
	if fs == nil || fs.GetMessage() != "0/1 nodes are available: 1 Insufficient cpu." {
		t.Errorf("FailedScheduling of the preemptor = %v", fs)
	}
}

func TestTaintRemovalSchedulesPendingPodWithoutWaitingForTheFlush(t *testing.T) {
	e := start(t) // the 5-minute flush is left as it is
	node := e.createNode(st.MakeNode().Name("node-1").Capacity("2", "4Gi").Taint("dedicated", "infra", "NoSchedule").Obj())
	e.createPod(st.MakePod().Name("pending").Req("100m", "64Mi").Obj())
	e.eventually(10*time.Second, "the pod to be unschedulable", func() bool {
		c := condition(e.getPod("pending"), "PodScheduled")
		return c != nil && c.GetStatus() == "False"
	})
	e.eventually(5*time.Second, "the pod to sit in the unschedulable pool", func() bool {
		return e.sched.Queue.Where("default", "pending") == "unschedulable"
	})

	// A label change is not a taint change: the pod stays where it is.
	node = e.getNode("node-1")
	node.Metadata.Labels["extra"] = "x"
	node = e.updateNode(node)
	time.Sleep(300 * time.Millisecond)
	if w := e.sched.Queue.Where("default", "pending"); w != "unschedulable" {
		t.Fatalf("after a label change the pod is in %q, want unschedulable", w)
	}

	removed := time.Now()
	node.Spec.Taints = nil
	e.updateNode(node)
	e.waitBound("pending", 15*time.Second)
	if took := time.Since(removed); took > 12*time.Second {
		t.Errorf("took %v after the taint was removed", took)
	}
	t.Logf("bound %v after the taint was removed", time.Since(removed).Round(time.Millisecond))
}

func TestGatedPodWaitsForItsGatesToBeRemoved(t *testing.T) {
	e := start(t)
	e.createNode(st.MakeNode().Name("node-1").Capacity("2", "4Gi").Obj())
	e.createPod(st.MakePod().Name("gated").SchedulingGate("example.com/wait").Req("100m", "").Obj())
	e.eventually(5*time.Second, "the pod to be gated", func() bool { return e.sched.Queue.Where("default", "gated") == "gated" })
	p := e.getPod("gated")
	p.Spec.SchedulingGates = nil
	if _, err := e.pods.Update(e.ctx, p); err != nil {
		t.Fatal(err)
	}
	e.waitBound("gated", 10*time.Second)
}

func TestNodeAddedLaterTakesThePendingPod(t *testing.T) {
	e := start(t)
	e.createPod(st.MakePod().Name("early").Req("100m", "").Obj())
	e.eventually(10*time.Second, "no nodes available", func() bool {
		c := condition(e.getPod("early"), "PodScheduled")
		return c != nil && strings.Contains(c.GetMessage(), "no nodes available to schedule pods")
	})
	e.createNode(st.MakeNode().Name("node-1").Capacity("2", "4Gi").Obj())
	e.waitBound("early", 15*time.Second)
}

func (e *env) getNode(name string) *corev1.Node {
	e.t.Helper()
	n, err := e.nodes.Get(e.ctx, "", name)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) updateNode(n *corev1.Node) *corev1.Node {
	e.t.Helper()
	out, err := e.nodes.Update(e.ctx, n)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}
