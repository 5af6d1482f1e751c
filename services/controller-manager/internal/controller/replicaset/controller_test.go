package replicaset

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

var webLabels = map[string]string{"app": "web"}

func newFixture(t *testing.T) (*ctltest.Fixture, *Controller) {
	t.Helper()
	f := ctltest.NewFixture(t)
	rc, err := New(f.Context)
	if err != nil {
		t.Fatal(err)
	}
	return f, rc
}

func ownedPod(rs *appsv1.ReplicaSet, name string) *ctltest.PodWrapper {
	return ctltest.MakePod().Name(name).Labels(map[string]string{"app": "web"}).OwnedBy(ctltest.Owner(rs, "apps/v1", "ReplicaSet"))
}

func sorted(s []string) []string { slices.Sort(s); return s }

func TestSyncCreatesPodsWithOwnerAndGenerateName(t *testing.T) {
	f, rc := newFixture(t)
	rs := ctltest.MakeReplicaSet().Name("web-7c9d8f6b5").Replicas(3).Obj()
	f.Add(rs)
	if err := rc.Sync(context.Background(), "default/web-7c9d8f6b5"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites(
		"create pods default/web-7c9d8f6b5-*",
		"create pods default/web-7c9d8f6b5-*",
		"create pods default/web-7c9d8f6b5-*",
		"update-status replicasets default/web-7c9d8f6b5",
	)
	events := sorted(f.Recorder.Events())
	want := []string{
		"Normal SuccessfulCreate Created pod: web-7c9d8f6b5-bbbbb",
		"Normal SuccessfulCreate Created pod: web-7c9d8f6b5-bbbbc",
		"Normal SuccessfulCreate Created pod: web-7c9d8f6b5-bbbbd",
	}
	if !slices.Equal(events, want) {
		t.Errorf("events = %q, want %q", events, want)
	}
	pod := f.Conn.Writes()[0].Object.(*corev1.Pod)
	refs := pod.GetMetadata().GetOwnerReferences()
	if len(refs) != 1 || refs[0].GetKind() != "ReplicaSet" || refs[0].GetApiVersion() != "apps/v1" || refs[0].GetName() != rs.Metadata.Name ||
		refs[0].GetUid() != rs.Metadata.Uid || !refs[0].GetController() || !refs[0].GetBlockOwnerDeletion() {
		t.Errorf("ownerReferences = %v", refs)
	}
	if pod.GetMetadata().GetLabels()["app"] != "web" || pod.GetSpec().GetContainers()[0].GetImage() != "web:1" {
		t.Errorf("pod not made from the template: %v", pod)
	}
	if add, _ := rc.Expectations().Pending("default/web-7c9d8f6b5"); add != 3 {
		t.Errorf("expecting %d creations, want 3", add)
	}
}

// A sync whose informer has not yet shown the pods it created must not
// create them again.
func TestSyncWithUnseenCreationsDoesNotDuplicate(t *testing.T) {
	f, rc := newFixture(t)
	rs := ctltest.MakeReplicaSet().Replicas(2).Obj()
	f.Add(rs)
	ctx := context.Background()
	if err := rc.Sync(ctx, "default/rs"); err != nil {
		t.Fatal(err)
	}
	f.SyncCache("replicasets") // the pods' watch is slow: none in the cache yet
	f.Conn.ClearActions()
	if err := rc.Sync(ctx, "default/rs"); err != nil {
		t.Fatal(err)
	}
	for _, a := range f.Conn.Writes() {
		if a.Verb == "create" {
			t.Fatalf("created again before observing: %v", ctltest.ActionStrings(f.Conn.Writes()))
		}
	}
	// The informer catches up: expectations are met and the next sync is quiet.
	f.SyncCache("pods", "replicasets")
	for _, p := range f.Conn.Objects("pods") {
		rc.addPod(p)
	}
	if !rc.Expectations().Satisfied("default/rs") {
		t.Fatal("expectations not satisfied after observing the creations")
	}
	f.Conn.ClearActions()
	if err := rc.Sync(ctx, "default/rs"); err != nil {
		t.Fatal(err)
	}
	for _, a := range f.Conn.Writes() {
		if a.Verb == "create" || a.Verb == "delete" {
			t.Errorf("unexpected %s", a)
		}
	}
}

// Expectations that are never met expire, so a lost event cannot wedge a ReplicaSet.
func TestExpectationsExpire(t *testing.T) {
	f, rc := newFixture(t)
	f.Add(ctltest.MakeReplicaSet().Replicas(1).Obj())
	ctx := context.Background()
	if err := rc.Sync(ctx, "default/rs"); err != nil {
		t.Fatal(err)
	}
	f.Clock.Step(6 * time.Minute)
	f.SyncCache("replicasets")
	f.Conn.ClearActions()
	if err := rc.Sync(ctx, "default/rs"); err != nil {
		t.Fatal(err)
	}
	if w := ctltest.ActionStrings(f.Conn.Writes()); len(w) == 0 || w[0] != "create pods default/rs-*" {
		t.Errorf("after expiry writes = %v, want a create", w)
	}
}

func TestSlowStartBatch(t *testing.T) {
	tests := []struct {
		name                   string
		count, failFrom        int
		wantCalls, wantSuccess int
		wantErr                bool
	}{
		{"all succeed", 10, 0, 10, 10, false},
		{"first fails: one call", 10, 1, 1, 0, true},
		{"fourth fails: batches 1, 2, 4 run", 10, 4, 7, 3, true},
		{"nothing to do", 0, 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			ok, err := slowStartBatch(tt.count, 1, func() error {
				n := int(calls.Add(1))
				if tt.failFrom > 0 && n >= tt.failFrom {
					return errors.New("boom")
				}
				return nil
			})
			if int(calls.Load()) != tt.wantCalls || ok != tt.wantSuccess || (err != nil) != tt.wantErr {
				t.Errorf("calls %d successes %d err %v; want %d %d error %v", calls.Load(), ok, err, tt.wantCalls, tt.wantSuccess, tt.wantErr)
			}
		})
	}
}

func TestSyncScaleDownDeletesLeastValuablePods(t *testing.T) {
	f, rc := newFixture(t)
	rs := ctltest.MakeReplicaSet().Replicas(2).Obj()
	t0 := ctltest.Epoch
	f.Add(rs,
		ownedPod(rs, "unscheduled").Obj(),
		ownedPod(rs, "pending").Node("n1").Obj(),
		ownedPod(rs, "not-ready").Node("n1").Phase("Running").Obj(),
		ownedPod(rs, "ready-old").Node("n1").Ready(t0).Obj(),
		ownedPod(rs, "ready-new").Node("n2").Ready(t0.Add(time.Minute)).Obj(),
	)
	if err := rc.Sync(context.Background(), "default/rs"); err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, a := range f.Conn.Writes() {
		if a.Verb == "delete" {
			deleted = append(deleted, a.Name)
		}
	}
	if want := []string{"not-ready", "pending", "unscheduled"}; !slices.Equal(sorted(deleted), want) {
		t.Errorf("deleted %v, want %v", deleted, want)
	}
	if _, del := rc.Expectations().Pending("default/rs"); del != 3 {
		t.Errorf("expecting %d deletions, want 3", del)
	}
	// Seeing a deleted pod twice (marked, then gone) counts once.
	rc.deletePod(ownedPod(rs, "pending").Obj())
	rc.deletePod(ownedPod(rs, "pending").Obj())
	if _, del := rc.Expectations().Pending("default/rs"); del != 2 {
		t.Errorf("expecting %d deletions after one was seen twice, want 2", del)
	}
}

func TestPodsToDeleteRanking(t *testing.T) {
	t0 := ctltest.Epoch
	mk := func(name string) *ctltest.PodWrapper { return ctltest.MakePod().Name(name) }
	tests := []struct {
		name string
		pods []*corev1.Pod
		want string
	}{
		{"unscheduled before scheduled", []*corev1.Pod{mk("a").Node("n").Obj(), mk("b").Obj()}, "b"},
		{"pending before running", []*corev1.Pod{mk("a").Node("n").Phase("Running").Obj(), mk("b").Node("n").Obj()}, "b"},
		{"not ready before ready", []*corev1.Pod{mk("a").Node("n").Ready(t0).Obj(), mk("b").Node("n").Phase("Running").Obj()}, "b"},
		{"recently ready before long ready", []*corev1.Pod{mk("a").Node("n").Ready(t0).Obj(), mk("b").Node("m").Ready(t0.Add(time.Hour)).Obj()}, "b"},
		{"more restarts first", []*corev1.Pod{mk("a").Node("n").RestartCount(1).Obj(), mk("b").Node("n").RestartCount(5).Obj()}, "b"},
		{"newer first", []*corev1.Pod{mk("a").Node("n").Obj(), mk("b").Node("n").Created(t0.Add(time.Hour)).Obj()}, "b"},
		{"doubled up on a node first", []*corev1.Pod{mk("a").Node("n").Ready(t0).Obj(), mk("b").Node("m").Ready(t0).Obj(), mk("c").Node("m").Ready(t0).Obj()}, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := podsToDelete(tt.pods, tt.pods, 1)
			if got[0].Metadata.Name != tt.want {
				t.Errorf("deleted %s first, want %s", got[0].Metadata.Name, tt.want)
			}
		})
	}
}

func TestSyncAdoptsOrphansAndReleasesMismatches(t *testing.T) {
	f, rc := newFixture(t)
	rs := ctltest.MakeReplicaSet().Replicas(1).Obj()
	orphan := ctltest.MakePod().Name("orphan").Labels(webLabels).Obj()
	stray := ownedPod(rs, "stray").Labels(map[string]string{"app": "other"}).Obj()
	someoneElses := ctltest.MakePod().Name("taken").Labels(webLabels).OwnedBy(ctltest.Owner(ctltest.MakeReplicaSet().Name("other").Obj(), "apps/v1", "ReplicaSet")).Obj()
	f.Add(rs, orphan, stray, someoneElses)
	if err := rc.Sync(context.Background(), "default/rs"); err != nil {
		t.Fatal(err)
	}
	if got := sorted(ctltest.ActionStrings(f.Conn.Writes()[:2])); !slices.Equal(got, []string{"update pods default/orphan", "update pods default/stray"}) {
		t.Fatalf("writes = %v", ctltest.ActionStrings(f.Conn.Writes()))
	}
	if refs := f.Conn.Object("pods", "default", "orphan").GetMetadata().GetOwnerReferences(); len(refs) != 1 || refs[0].GetUid() != rs.Metadata.Uid {
		t.Errorf("orphan not adopted: %v", refs)
	}
	if refs := f.Conn.Object("pods", "default", "stray").GetMetadata().GetOwnerReferences(); len(refs) != 0 {
		t.Errorf("stray not released: %v", refs)
	}
	// The adopted orphan is the one replica: no create, no delete.
	for _, a := range f.Conn.Writes() {
		if a.Verb == "create" || a.Verb == "delete" {
			t.Errorf("unexpected %s", a)
		}
	}
}

func TestSyncDoesNotAdoptForAReplicaSetBeingReplaced(t *testing.T) {
	f, rc := newFixture(t)
	rs := ctltest.MakeReplicaSet().Replicas(1).Obj()
	f.Add(rs, ctltest.MakePod().Name("orphan").Labels(webLabels).Obj())
	fresh := ctltest.MakeReplicaSet().UID("another-uid").Obj()
	f.Conn.Seed(fresh) // the apiserver has a new ReplicaSet of the same name
	err := rc.Sync(context.Background(), "default/rs")
	if err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("err = %v, want the owner-gone error", err)
	}
	if refs := f.Conn.Object("pods", "default", "orphan").GetMetadata().GetOwnerReferences(); len(refs) != 0 {
		t.Errorf("adopted by a stale ReplicaSet: %v", refs)
	}
}

func TestSyncStatusCountsReadyAndAvailable(t *testing.T) {
	f, rc := newFixture(t)
	rs := ctltest.MakeReplicaSet().Replicas(3).Generation(4).Obj()
	rs.Spec.MinReadySeconds = 30
	t0 := ctltest.Epoch
	f.Add(rs,
		ownedPod(rs, "a").Node("n").Ready(t0.Add(-time.Minute)).Obj(), // available
		ownedPod(rs, "b").Node("n").Ready(t0.Add(-10*time.Second)).Obj(),
		ownedPod(rs, "c").Node("n").Label("extra", "x").Obj(),
		ownedPod(rs, "d").Node("n").Terminating(t0).Obj(), // not counted
	)
	if err := rc.Sync(context.Background(), "default/rs"); err != nil {
		t.Fatal(err)
	}
	got := f.Conn.Object("replicasets", "default", "rs").(*appsv1.ReplicaSet).GetStatus()
	if got.GetReplicas() != 3 || got.GetReadyReplicas() != 2 || got.GetAvailableReplicas() != 1 || got.GetFullyLabeledReplicas() != 3 || got.GetObservedGeneration() != 4 {
		t.Errorf("status = %v", got)
	}
}

func TestSyncReplacesTerminatingPod(t *testing.T) {
	f, rc := newFixture(t)
	rs := ctltest.MakeReplicaSet().Replicas(1).Obj()
	f.Add(rs, ownedPod(rs, "going").Node("n").Terminating(ctltest.Epoch).Obj())
	if err := rc.Sync(context.Background(), "default/rs"); err != nil {
		t.Fatal(err)
	}
	if w := ctltest.ActionStrings(f.Conn.Writes()); w[0] != "create pods default/rs-*" {
		t.Errorf("writes = %v", w)
	}
}

func TestSyncCreateFailureSetsReplicaFailure(t *testing.T) {
	f, rc := newFixture(t)
	f.Add(ctltest.MakeReplicaSet().Replicas(4).Obj())
	f.Conn.FailOn("create", "pods", apierrors.NewForbidden(apierrors.GroupResource{Resource: "pods"}, "", "quota exceeded"))
	if err := rc.Sync(context.Background(), "default/rs"); err == nil {
		t.Fatal("no error")
	}
	// One call of the first batch, not four.
	f.ExpectWrites("create pods default/rs-*", "update-status replicasets default/rs")
	st := f.Conn.Object("replicasets", "default", "rs").(*appsv1.ReplicaSet).GetStatus()
	if len(st.GetConditions()) != 1 || st.GetConditions()[0].GetReason() != "FailedCreate" {
		t.Errorf("conditions = %v", st.GetConditions())
	}
	if !rc.Expectations().Satisfied("default/rs") {
		t.Error("creations never made are still expected")
	}
	if ev := f.Recorder.Events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning FailedCreate Error creating:") {
		t.Errorf("events = %v", ev)
	}
}

func TestSyncMissingReplicaSetForgetsExpectations(t *testing.T) {
	f, rc := newFixture(t)
	rc.Expectations().ExpectCreations("default/gone", 3)
	if err := rc.Sync(context.Background(), "default/gone"); err != nil {
		t.Fatal(err)
	}
	if add, _ := rc.Expectations().Pending("default/gone"); add != 0 {
		t.Errorf("expectations kept for a deleted ReplicaSet")
	}
	if len(f.Conn.Actions()) != 0 {
		t.Errorf("actions = %v", f.Conn.Actions())
	}
}
