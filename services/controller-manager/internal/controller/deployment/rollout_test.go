package deployment

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"podline.dev/pkg/object"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files under testdata")

// golden compares got with testdata/name, or rewrites it with -rewrite.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *rewrite {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -rewrite to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// A rolling update of 3 replicas with maxSurge 1 and maxUnavailable 0 never
// has fewer than 3 available pods nor more than 4 pods, and ends with the
// new ReplicaSet at 3 and the old one at 0.
func TestRollingUpdateSurgeOneNeverDropsBelowReplicas(t *testing.T) {
	s := newSim(t, ctltest.MakeDeployment().Replicas(3).Rolling(1, 0).Obj())
	s.maxPods = 4
	s.settle(10)
	if avail, _ := s.available(); avail != 3 {
		t.Fatalf("first rollout: %d available, want 3", avail)
	}
	s.minAvailable, s.armed = 3, true
	oldRS := s.newRS()
	s.setTemplate("web:2")
	s.settle(20)

	newRS := s.newRS()
	if newRS == oldRS || newRS.GetStatus().GetAvailableReplicas() != 3 || rsReplicas(newRS) != 3 {
		t.Errorf("new ReplicaSet %s: %d/%d available, want 3/3", newRS.GetMetadata().GetName(), newRS.GetStatus().GetAvailableReplicas(), rsReplicas(newRS))
	}
	for _, rs := range s.rss {
		if rs != newRS && rsReplicas(rs) != 0 {
			t.Errorf("old ReplicaSet %s still has %d replicas", rs.GetMetadata().GetName(), rsReplicas(rs))
		}
	}
	if got := s.d.GetMetadata().GetAnnotations()[RevisionAnnotation]; got != "2" {
		t.Errorf("deployment revision = %q, want 2", got)
	}
	if c := getCondition(s.d.Status, ConditionProgressing); c.GetReason() != ReasonNewRSAvailable {
		t.Errorf("Progressing reason = %q, want %q", c.GetReason(), ReasonNewRSAvailable)
	}
	golden(t, "rolling-3-surge1-unavailable0.txt", strings.Join(s.log, "\n")+"\n")
}

// With maxSurge 0 and maxUnavailable 1 a rollout never has more than 3 pods
// and never fewer than 2 available.
func TestRollingUpdateUnavailableOneNeverExceedsReplicas(t *testing.T) {
	s := newSim(t, ctltest.MakeDeployment().Replicas(3).Rolling(0, 1).Obj())
	s.maxPods = 3
	s.settle(10)
	s.minAvailable, s.armed = 2, true
	s.setTemplate("web:2")
	s.settle(20)
	if rs := s.newRS(); rs.GetStatus().GetAvailableReplicas() != 3 {
		t.Errorf("new ReplicaSet has %d available, want 3", rs.GetStatus().GetAvailableReplicas())
	}
	golden(t, "rolling-3-surge0-unavailable1.txt", strings.Join(s.log, "\n")+"\n")
}

// Recreate scales the old ReplicaSet to 0, waits for its pods to go, then
// creates the new one at full size.
func TestRecreateScalesDownBeforeUp(t *testing.T) {
	s := newSim(t, ctltest.MakeDeployment().Replicas(3).Recreate().Obj())
	s.settle(10)
	s.setTemplate("web:2")
	s.settle(10)
	golden(t, "recreate-3.txt", strings.Join(s.log, "\n")+"\n")
	for _, rs := range s.rss {
		if rs != s.newRS() && rsReplicas(rs) != 0 {
			t.Errorf("old ReplicaSet still has %d replicas", rsReplicas(rs))
		}
	}
}

// Scaling in the middle of a rollout spreads the new replicas over the
// ReplicaSets in proportion to their sizes.
func TestScaleDuringRolloutIsProportional(t *testing.T) {
	s := newSim(t, ctltest.MakeDeployment().Replicas(10).Rolling(3, 2).Obj())
	s.settle(10)
	s.stuck = true // new pods never become available: the rollout stalls half way
	s.setTemplate("web:2")
	s.step()
	s.step()
	s.setReplicas(20)
	s.step()
	golden(t, "proportional-scale.txt", strings.Join(s.log, "\n")+"\n")
	total := ReplicaCount(s.rss)
	if total != 20+MaxSurge(s.d) {
		t.Errorf("after scaling to 20: %d replicas over all ReplicaSets, want %d", total, 20+MaxSurge(s.d))
	}
	for _, rs := range s.rss {
		if rsReplicas(rs) == 0 {
			t.Errorf("ReplicaSet %s was not scaled proportionally", rs.GetMetadata().GetName())
		}
	}
}

// Applying the old template again (a rollback) makes the old ReplicaSet
// the new one, with the next revision, and no third ReplicaSet.
func TestRollbackReusesOldReplicaSet(t *testing.T) {
	s := newSim(t, ctltest.MakeDeployment().Replicas(2).Rolling(1, 0).Obj())
	s.settle(10)
	first := s.newRS().GetMetadata().GetName()
	s.setTemplate("web:2")
	s.settle(20)
	s.setTemplate("web:1")
	s.settle(20)
	if len(s.rss) != 2 {
		t.Fatalf("%d ReplicaSets, want 2", len(s.rss))
	}
	rs := s.newRS()
	if rs.GetMetadata().GetName() != first || Revision(rs) != 3 {
		t.Errorf("new ReplicaSet %s revision %d, want %s revision 3", rs.GetMetadata().GetName(), Revision(rs), first)
	}
	if h := rs.GetMetadata().GetAnnotations()[RevisionHistoryAnnotation]; h != "1" {
		t.Errorf("revision-history = %q, want 1", h)
	}
}

// Old ReplicaSets beyond revisionHistoryLimit are deleted once scaled to 0.
func TestRevisionHistoryLimitCleansUp(t *testing.T) {
	s := newSim(t, ctltest.MakeDeployment().Replicas(1).Rolling(1, 0).RevisionHistoryLimit(1).Obj())
	s.settle(10)
	for _, img := range []string{"web:2", "web:3", "web:4"} {
		s.setTemplate(img)
		s.settle(20)
	}
	if len(s.rss) != 2 {
		t.Errorf("%d ReplicaSets after 4 revisions with a history limit of 1, want 2", len(s.rss))
	}
}

// A paused deployment does not roll out a new template but still scales.
func TestPausedDeploymentDoesNotRollOut(t *testing.T) {
	s := newSim(t, ctltest.MakeDeployment().Replicas(2).Obj())
	s.settle(10)
	d := object.Copy(s.d)
	d.Spec.Paused = true
	s.d = d
	s.setTemplate("web:2")
	s.setReplicas(4)
	s.settle(10)
	if len(s.rss) != 1 || rsReplicas(s.rss[0]) != 4 {
		t.Fatalf("paused: %d ReplicaSets, first at %d replicas; want 1 at 4", len(s.rss), rsReplicas(s.rss[0]))
	}
	if c := getCondition(s.d.Status, ConditionProgressing); c.GetReason() != ReasonPaused {
		t.Errorf("Progressing reason = %q, want %q", c.GetReason(), ReasonPaused)
	}
	d = object.Copy(s.d)
	d.Spec.Paused = false
	s.d = d
	s.settle(20)
	if len(s.rss) != 2 || s.newRS().GetStatus().GetAvailableReplicas() != 4 {
		t.Errorf("resumed: the new template did not roll out: %s", s.state())
	}
}

// A rollout that makes no progress for progressDeadlineSeconds gets
// Progressing=False ProgressDeadlineExceeded; until then the plan asks to
// be synced again when the deadline would pass.
func TestProgressDeadlineExceeded(t *testing.T) {
	s := newSim(t, ctltest.MakeDeployment().Replicas(1).ProgressDeadline(60).Obj())
	s.stuck = true
	s.step()
	s.step()
	plan := s.step()
	if plan.RequeueAfter <= 0 {
		t.Fatalf("a stuck rollout asked for no resync")
	}
	s.now = s.now.Add(plan.RequeueAfter)
	s.step()
	c := getCondition(s.d.Status, ConditionProgressing)
	if c.GetReason() != ReasonTimedOut || c.GetStatus() != "False" {
		t.Errorf("Progressing = %s/%s, want False/%s", c.GetStatus(), c.GetReason(), ReasonTimedOut)
	}
}
