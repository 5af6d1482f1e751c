package test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/client"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/controller-manager/internal/app"
	"podline.dev/services/controller-manager/internal/controller/deployment"
)

// rolledOut waits for a deployment of n pods: one ReplicaSet and n pods,
// with the ownership chain Kubernetes builds, and returns them.
func rolledOut(ctx context.Context, t *testing.T, s *apiservertest.Server, d *appsv1.Deployment, n int) (*appsv1.ReplicaSet, []*corev1.Pod) {
	t.Helper()
	var rs *appsv1.ReplicaSet
	var pods []*corev1.Pod
	eventually(t, 15*time.Second, fmt.Sprintf("%d pods of %s", n, d.GetMetadata().GetName()), func() (bool, string) {
		rss := listRS(ctx, t, s, "default")
		var mine []*appsv1.ReplicaSet
		for _, r := range rss {
			if strings.HasPrefix(r.GetMetadata().GetName(), d.GetMetadata().GetName()+"-") {
				mine = append(mine, r)
			}
		}
		pods = listPods(ctx, t, s, "default", "app="+d.GetMetadata().GetName())
		if len(mine) != 1 {
			return false, fmt.Sprintf("%d replica sets", len(mine))
		}
		rs = mine[0]
		return len(pods) == n, fmt.Sprintf("%d pods", len(pods))
	})
	return rs, pods
}

func TestDeploymentCreatesReplicaSetAndPods(t *testing.T) {
	s := apiservertest.Start(t)
	startManager(t, s, nil)
	ctx := ctxFor(t, 60*time.Second)
	d, err := client.Deployments(s.Conn).Create(ctx, deploymentOf("web", 3, "web:1"))
	if err != nil {
		t.Fatal(err)
	}
	rs, pods := rolledOut(ctx, t, s, d, 3)

	hash := rs.GetMetadata().GetLabels()[deployment.PodTemplateHashLabel]
	if hash == "" || rs.GetMetadata().GetName() != "web-"+hash {
		t.Errorf("replica set %s with pod-template-hash %q", rs.GetMetadata().GetName(), hash)
	}
	if rs.GetSpec().GetSelector().GetMatchLabels()[deployment.PodTemplateHashLabel] != hash {
		t.Errorf("selector %v lacks the hash", rs.GetSpec().GetSelector())
	}
	checkOwner(t, rs, "apps/v1", "Deployment", d.GetMetadata())
	for _, p := range pods {
		checkOwner(t, p, "apps/v1", "ReplicaSet", rs.GetMetadata())
		if p.GetMetadata().GetLabels()[deployment.PodTemplateHashLabel] != hash {
			t.Errorf("pod %s labels %v", p.GetMetadata().GetName(), p.GetMetadata().GetLabels())
		}
		suffix := strings.TrimPrefix(p.GetMetadata().GetName(), rs.GetMetadata().GetName()+"-")
		if p.GetMetadata().GetGenerateName() != rs.GetMetadata().GetName()+"-" || len(suffix) != 5 {
			t.Errorf("pod name %s, generateName %q", p.GetMetadata().GetName(), p.GetMetadata().GetGenerateName())
		}
	}
	// The status catches up, and the events read as in Kubernetes.
	eventually(t, 10*time.Second, "deployment status", func() (bool, string) {
		cur, err := client.Deployments(s.Conn).Get(ctx, "default", "web")
		if err != nil {
			return false, err.Error()
		}
		st := cur.GetStatus()
		return st.GetReplicas() == 3 && st.GetObservedGeneration() == 1 && cur.GetMetadata().GetAnnotations()[deployment.RevisionAnnotation] == "1",
			st.String()
	})
	eventually(t, 10*time.Second, "events", func() (bool, string) {
		evs, _, err := client.Events(s.Conn).List(ctx, &metav1.ListRequest{Namespace: "default"})
		if err != nil {
			return false, err.Error()
		}
		var scaled, created int
		var seen []string
		for _, e := range evs {
			seen = append(seen, e.GetReason()+": "+e.GetMessage())
			switch {
			case e.GetReason() == "ScalingReplicaSet" && e.GetMessage() == fmt.Sprintf("Scaled up replica set %s from 0 to 3", rs.GetMetadata().GetName()):
				scaled++
			case e.GetReason() == "SuccessfulCreate" && strings.HasPrefix(e.GetMessage(), "Created pod: "+rs.GetMetadata().GetName()+"-"):
				created++
			}
		}
		return scaled == 1 && created == 3, strings.Join(seen, "; ")
	})
}

func microTime(t *metav1.MicroTime) time.Time { return time.Unix(t.GetSeconds(), int64(t.GetNanos())) }

func checkOwner(t *testing.T, obj interface{ GetMetadata() *metav1.ObjectMeta }, apiVersion, kind string, owner *metav1.ObjectMeta) {
	t.Helper()
	refs := obj.GetMetadata().GetOwnerReferences()
	if len(refs) != 1 {
		t.Errorf("%s has %d ownerReferences", obj.GetMetadata().GetName(), len(refs))
		return
	}
	r := refs[0]
	if r.GetApiVersion() != apiVersion || r.GetKind() != kind || r.GetName() != owner.GetName() || r.GetUid() != owner.GetUid() ||
		!r.GetController() || !r.GetBlockOwnerDeletion() {
		t.Errorf("%s ownerReference = %v, want %s %s %s controller, blockOwnerDeletion", obj.GetMetadata().GetName(), r, apiVersion, kind, owner.GetName())
	}
}

func TestImageChangeRollsToNewReplicaSet(t *testing.T) {
	s := apiservertest.Start(t)
	startManager(t, s, nil)
	ctx := ctxFor(t, 60*time.Second)
	kubelet(ctx, s)
	d := deploymentOf("web", 3, "web:1")
	d.Spec.Strategy = &appsv1.DeploymentStrategy{Type: "RollingUpdate", RollingUpdate: &appsv1.RollingUpdateDeployment{
		MaxSurge: &metav1.IntOrString{IntVal: 1}, MaxUnavailable: &metav1.IntOrString{IntVal: 0}}}
	d, err := client.Deployments(s.Conn).Create(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	oldRS, _ := rolledOut(ctx, t, s, d, 3)
	eventually(t, 15*time.Second, "3 ready pods", func() (bool, string) {
		n := readyPods(listPods(ctx, t, s, "default", "app=web"))
		return n == 3, fmt.Sprintf("%d ready", n)
	})

	// Watch the ready pods through the rollout: never fewer than 3.
	var minReady atomic.Int32
	minReady.Store(3)
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for watchCtx.Err() == nil {
			pods, _, err := client.Pods(s.Conn).List(watchCtx, &metav1.ListRequest{Namespace: "default", LabelSelector: "app=web"})
			if n := int32(readyPods(pods)); err == nil && n < minReady.Load() {
				minReady.Store(n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()

	updateDeployment(ctx, t, s, "web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "web:2" })
	eventually(t, 30*time.Second, "rollout to web:2", func() (bool, string) {
		cur, err := client.Deployments(s.Conn).Get(ctx, "default", "web")
		if err != nil {
			return false, err.Error()
		}
		st := cur.GetStatus()
		var desc []string
		oldSize := int32(-1)
		for _, rs := range listRS(ctx, t, s, "default") {
			desc = append(desc, fmt.Sprintf("%s=%d/%d", rs.GetMetadata().GetName(), rs.GetStatus().GetAvailableReplicas(), rs.GetSpec().GetReplicas()))
			if rs.GetMetadata().GetUid() == oldRS.GetMetadata().GetUid() {
				oldSize = rs.GetSpec().GetReplicas()
			}
		}
		done := st.GetUpdatedReplicas() == 3 && st.GetAvailableReplicas() == 3 && st.GetReplicas() == 3 &&
			st.GetObservedGeneration() == cur.GetMetadata().GetGeneration() && oldSize == 0
		return done, fmt.Sprintf("status %v; replica sets %v", st, desc)
	})
	stopWatch()
	<-watched
	if m := minReady.Load(); m < 3 {
		t.Errorf("ready pods dropped to %d during a maxUnavailable=0 rollout", m)
	}
	final, _ := client.Deployments(s.Conn).Get(ctx, "default", "web")
	if rev := final.GetMetadata().GetAnnotations()[deployment.RevisionAnnotation]; rev != "2" {
		t.Errorf("revision %q, want 2", rev)
	}
	pods := listPods(ctx, t, s, "default", "app=web")
	for _, p := range pods {
		if img := p.GetSpec().GetContainers()[0].GetImage(); img != "web:2" && p.GetMetadata().GetDeletionTimestamp() == nil {
			t.Errorf("pod %s still runs %s", p.GetMetadata().GetName(), img)
		}
	}
}

func TestDeleteDeploymentInBackgroundRemovesReplicaSetsAndPods(t *testing.T) {
	s := apiservertest.Start(t)
	startManager(t, s, nil)
	ctx := ctxFor(t, 60*time.Second)
	d, err := client.Deployments(s.Conn).Create(ctx, deploymentOf("web", 3, "web:1"))
	if err != nil {
		t.Fatal(err)
	}
	rolledOut(ctx, t, s, d, 3)
	if _, err := client.Deployments(s.Conn).Delete(ctx, "default", "web", &metav1.DeleteOptions{PropagationPolicy: proto.String("Background")}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "everything gone", func() (bool, string) {
		rss, pods := listRS(ctx, t, s, "default"), listPods(ctx, t, s, "default", "")
		return len(rss) == 0 && len(pods) == 0, fmt.Sprintf("%d replica sets, %d pods", len(rss), len(pods))
	})
}

func TestDeleteDeploymentOrphanLeavesPods(t *testing.T) {
	s := apiservertest.Start(t)
	startManager(t, s, nil)
	ctx := ctxFor(t, 60*time.Second)
	d, err := client.Deployments(s.Conn).Create(ctx, deploymentOf("web", 3, "web:1"))
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := rolledOut(ctx, t, s, d, 3)
	if _, err := client.Deployments(s.Conn).Delete(ctx, "default", "web", &metav1.DeleteOptions{PropagationPolicy: proto.String("Orphan")}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "deployment gone, replica set orphaned", func() (bool, string) {
		_, err := client.Deployments(s.Conn).Get(ctx, "default", "web")
		cur, rsErr := client.ReplicaSets(s.Conn).Get(ctx, "default", rs.GetMetadata().GetName())
		if rsErr != nil {
			return false, rsErr.Error()
		}
		return err != nil && len(cur.GetMetadata().GetOwnerReferences()) == 0, fmt.Sprintf("deployment err %v; rs owners %v", err, cur.GetMetadata().GetOwnerReferences())
	})
	// Orphan the pods too: delete the ReplicaSet with Orphan.
	if _, err := client.ReplicaSets(s.Conn).Delete(ctx, "default", rs.GetMetadata().GetName(), &metav1.DeleteOptions{PropagationPolicy: proto.String("Orphan")}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "replica set gone, pods orphaned", func() (bool, string) {
		rss := listRS(ctx, t, s, "default")
		pods := listPods(ctx, t, s, "default", "")
		owned := 0
		for _, p := range pods {
			owned += len(p.GetMetadata().GetOwnerReferences())
		}
		return len(rss) == 0 && len(pods) == 3 && owned == 0, fmt.Sprintf("%d replica sets, %d pods, %d owner refs", len(rss), len(pods), owned)
	})
	// And they stay.
	time.Sleep(500 * time.Millisecond)
	if n := len(listPods(ctx, t, s, "default", "")); n != 3 {
		t.Errorf("%d pods left, want the 3 orphans", n)
	}
}

func TestDeleteDeploymentInForegroundDeletesDependentsFirst(t *testing.T) {
	s := apiservertest.Start(t)
	startManager(t, s, nil)
	ctx := ctxFor(t, 60*time.Second)
	d, err := client.Deployments(s.Conn).Create(ctx, deploymentOf("web", 2, "web:1"))
	if err != nil {
		t.Fatal(err)
	}
	rolledOut(ctx, t, s, d, 2)
	if _, err := client.Deployments(s.Conn).Delete(ctx, "default", "web", &metav1.DeleteOptions{PropagationPolicy: proto.String("Foreground")}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "everything gone", func() (bool, string) {
		_, derr := client.Deployments(s.Conn).Get(ctx, "default", "web")
		rss, pods := listRS(ctx, t, s, "default"), listPods(ctx, t, s, "default", "")
		return derr != nil && len(rss) == 0 && len(pods) == 0, fmt.Sprintf("deployment %v, %d replica sets, %d pods", derr, len(rss), len(pods))
	})
}

func TestOnlyTheLeaseHolderActsAndHandsOver(t *testing.T) {
	s := apiservertest.Start(t)
	ctx := ctxFor(t, 60*time.Second)
	const lease = 2 * time.Second
	elect := func(id string) func(*app.Config) {
		return func(c *app.Config) {
			c.LeaderElect, c.Identity = true, id
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = lease, 1500*time.Millisecond, 250*time.Millisecond
		}
	}
	holder := func() string {
		l, err := client.Leases(s.Conn).Get(ctx, app.LeaseNamespace, app.LeaseName)
		if err != nil {
			return ""
		}
		return l.GetSpec().GetHolderIdentity()
	}
	a := startManager(t, s, elect("a"))
	eventually(t, 10*time.Second, "a leads", func() (bool, string) { return holder() == "a", holder() })
	b := startManager(t, s, elect("b"))

	d, err := client.Deployments(s.Conn).Create(ctx, deploymentOf("one", 2, "web:1"))
	if err != nil {
		t.Fatal(err)
	}
	rolledOut(ctx, t, s, d, 2)
	if holder() != "a" {
		t.Fatalf("the lease moved to %q", holder())
	}
	if n := b.conn.writes(); n != 0 {
		t.Errorf("the standby made %d writes", n)
	}
	if a.conn.writes() == 0 {
		t.Error("the leader made no writes")
	}

	a.stop(t) // a crash: the Lease is not released
	last, err := client.Leases(s.Conn).Get(ctx, app.LeaseNamespace, app.LeaseName)
	if err != nil || last.GetSpec().GetHolderIdentity() != "a" {
		t.Fatalf("lease after a stopped: %v %v", last, err)
	}
	killed := time.Now()
	eventually(t, 5*lease, "b takes over", func() (bool, string) { return holder() == "b", holder() })
	t.Logf("b took over %v after a was killed (lease duration %v)", time.Since(killed).Round(10*time.Millisecond), lease)
	// b waited out the lease from a's last renewal, and no longer than the
	// lease plus its retry period (as the Lease records it, so a loaded
	// machine delaying this test does not matter).
	taken, _ := client.Leases(s.Conn).Get(ctx, app.LeaseNamespace, app.LeaseName)
	renewed := microTime(last.GetSpec().GetRenewTime())
	acquired := microTime(taken.GetSpec().GetAcquireTime())
	if gap := acquired.Sub(renewed); gap < lease {
		t.Errorf("b took the lease %v after a's last renewal, before the %v lease ran out", gap, lease)
	} else {
		t.Logf("handover %v after a's last renewal", gap.Round(10*time.Millisecond))
	}
	if n := taken.GetSpec().GetLeaseTransitions(); n < 1 {
		t.Errorf("leaseTransitions = %d", n)
	}
	d2, err := client.Deployments(s.Conn).Create(ctx, deploymentOf("two", 2, "web:1"))
	if err != nil {
		t.Fatal(err)
	}
	rolledOut(ctx, t, s, d2, 2)
	if b.conn.writes() == 0 {
		t.Error("the new leader made no writes")
	}
}
