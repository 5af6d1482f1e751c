package deployment

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	appsv1 "podline.dev/proto/apps/v1"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

func newFixture(t *testing.T) (*ctltest.Fixture, *Controller) {
	t.Helper()
	f := ctltest.NewFixture(t)
	dc, err := New(f.Context)
	if err != nil {
		t.Fatal(err)
	}
	return f, dc
}

func hashOf(d *appsv1.Deployment) string { return ComputeHash(d.Spec.Template, nil) }

// ownedRS is the ReplicaSet the controller would have made for d, at size n.
func ownedRS(d *appsv1.Deployment, n int32, revision string) *appsv1.ReplicaSet {
	h := hashOf(d)
	labels := map[string]string{"app": "web", PodTemplateHashLabel: h}
	rs := ctltest.MakeReplicaSet().Name(d.Metadata.Name+"-"+h).Selector(labels).Labels(labels).
		Image(d.Spec.Template.Spec.Containers[0].Image).Replicas(n).
		OwnedBy(ctltest.Owner(d, "apps/v1", "Deployment")).
		Annotation(RevisionAnnotation, revision).
		Annotation(DesiredReplicasAnnotation, "3").Annotation(MaxReplicasAnnotation, "4").
		Status(n, n, n).Obj()
	return rs
}

func TestSyncNewDeploymentCreatesReplicaSet(t *testing.T) {
	f, dc := newFixture(t)
	d := ctltest.MakeDeployment().Obj()
	f.Add(d)
	if err := dc.Sync(context.Background(), "default/web"); err != nil {
		t.Fatal(err)
	}
	name := "web-" + hashOf(d)
	f.ExpectWrites("create replicasets default/"+name, "update-status deployments default/web")
	f.ExpectEvents("Normal ScalingReplicaSet Scaled up replica set " + name + " from 0 to 3")

	rs := f.Conn.Writes()[0].Object.(*appsv1.ReplicaSet)
	ref := rs.GetMetadata().GetOwnerReferences()
	if len(ref) != 1 || ref[0].GetKind() != "Deployment" || ref[0].GetUid() != d.Metadata.Uid || !ref[0].GetController() || !ref[0].GetBlockOwnerDeletion() {
		t.Errorf("ownerReferences = %v", ref)
	}
	h := hashOf(d)
	if rs.Metadata.Labels[PodTemplateHashLabel] != h || rs.Spec.Selector.MatchLabels[PodTemplateHashLabel] != h ||
		rs.Spec.Template.Metadata.Labels[PodTemplateHashLabel] != h {
		t.Errorf("pod-template-hash %q missing from labels, selector or template: %v", h, rs)
	}
	ann := rs.Metadata.Annotations
	if ann[RevisionAnnotation] != "1" || ann[DesiredReplicasAnnotation] != "3" || ann[MaxReplicasAnnotation] != "4" {
		t.Errorf("annotations = %v", ann)
	}
	nd := f.Conn.Writes()[1].Object.(*appsv1.Deployment)
	if nd.Metadata.Annotations[RevisionAnnotation] != "1" || nd.Status.ObservedGeneration != 1 {
		t.Errorf("deployment after sync: revision %q observedGeneration %d", nd.Metadata.Annotations[RevisionAnnotation], nd.Status.ObservedGeneration)
	}
	if c := getCondition(nd.Status, ConditionProgressing); c.GetReason() != ReasonNewReplicaSet ||
		c.GetMessage() != `Created new replica set "`+name+`"` {
		t.Errorf("Progressing = %v", c)
	}
}

func TestSyncIsIdempotent(t *testing.T) {
	f, dc := newFixture(t)
	f.Add(ctltest.MakeDeployment().Obj())
	ctx := context.Background()
	for range 4 {
		if err := dc.Sync(ctx, "default/web"); err != nil {
			t.Fatal(err)
		}
		f.SyncCache("deployments", "replicasets")
	}
	f.Conn.ClearActions()
	if err := dc.Sync(ctx, "default/web"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites()
}

func TestSyncScalesReplicaSetWithDeployment(t *testing.T) {
	f, dc := newFixture(t)
	d := ctltest.MakeDeployment().Replicas(5).Generation(2).Obj()
	rs := ownedRS(d, 3, "1")
	f.Add(d, rs)
	if err := dc.Sync(context.Background(), "default/web"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites("update replicasets default/"+rs.Metadata.Name, "update-status deployments default/web")
	f.ExpectEvents("Normal ScalingReplicaSet Scaled up replica set " + rs.Metadata.Name + " from 3 to 5")
	got := f.Conn.Writes()[0].Object.(*appsv1.ReplicaSet)
	if got.Metadata.Annotations[DesiredReplicasAnnotation] != "5" || got.Metadata.Annotations[MaxReplicasAnnotation] != "7" {
		t.Errorf("replicas annotations = %v", got.Metadata.Annotations)
	}
}

func TestSyncAdoptsOrphanReplicaSet(t *testing.T) {
	f, dc := newFixture(t)
	d := ctltest.MakeDeployment().Obj()
	rs := ownedRS(d, 3, "1")
	rs.Metadata.OwnerReferences = nil
	f.Add(d, rs)
	if err := dc.Sync(context.Background(), "default/web"); err != nil {
		t.Fatal(err)
	}
	// Adoption, then the revision moves to the deployment's status write.
	f.ExpectWrites("update replicasets default/"+rs.Metadata.Name, "update-status deployments default/web")
	adopted := f.Conn.Object("replicasets", "default", rs.Metadata.Name).(*appsv1.ReplicaSet)
	if len(adopted.Metadata.OwnerReferences) != 1 || adopted.Metadata.OwnerReferences[0].GetUid() != d.Metadata.Uid {
		t.Errorf("not adopted: %v", adopted.Metadata.OwnerReferences)
	}
	if gets := ctltest.ActionStrings(f.Conn.Actions())[0]; gets != "get deployments default/web" {
		t.Errorf("adoption did not recheck the deployment first: %s", gets)
	}
}

func TestSyncReleasesReplicaSetNoLongerSelected(t *testing.T) {
	f, dc := newFixture(t)
	d := ctltest.MakeDeployment().Obj()
	other := ctltest.MakeReplicaSet().Name("other").Selector(map[string]string{"app": "other"}).
		Labels(map[string]string{"app": "other"}).OwnedBy(ctltest.Owner(d, "apps/v1", "Deployment")).Obj()
	f.Add(d, other)
	if err := dc.Sync(context.Background(), "default/web"); err != nil {
		t.Fatal(err)
	}
	writes := ctltest.ActionStrings(f.Conn.Writes())
	if writes[0] != "update replicasets default/other" {
		t.Fatalf("writes = %v, want the release of default/other first", writes)
	}
	if refs := f.Conn.Object("replicasets", "default", "other").GetMetadata().GetOwnerReferences(); len(refs) != 0 {
		t.Errorf("still owned: %v", refs)
	}
}

func TestSyncLeavesOtherControllersReplicaSets(t *testing.T) {
	f, dc := newFixture(t)
	d := ctltest.MakeDeployment().Obj()
	other := ctltest.MakeDeployment().Name("other").Obj()
	rs := ctltest.MakeReplicaSet().Name("other-rs").Labels(map[string]string{"app": "web"}).
		OwnedBy(ctltest.Owner(other, "apps/v1", "Deployment")).Obj()
	f.Add(d, other, rs)
	if err := dc.Sync(context.Background(), "default/web"); err != nil {
		t.Fatal(err)
	}
	for _, a := range f.Conn.Writes() {
		if a.Name == rs.Metadata.Name && a.Verb == "update" {
			t.Errorf("touched another deployment's ReplicaSet: %s", a)
		}
	}
}

func TestSyncInvalidStrategyIsReportedNotRetried(t *testing.T) {
	f, dc := newFixture(t)
	d := ctltest.MakeDeployment().Obj()
	d.Spec.Strategy.RollingUpdate.MaxSurge.StrVal = "lots"
	f.Add(d)
	if err := dc.Sync(context.Background(), "default/web"); err != nil {
		t.Fatalf("a bad object was retried: %v", err)
	}
	f.ExpectWrites()
	if ev := f.Recorder.Events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning InvalidStrategy") {
		t.Errorf("events = %v", ev)
	}
}

func TestSyncEmptySelectorSelectsNothing(t *testing.T) {
	f, dc := newFixture(t)
	d := ctltest.MakeDeployment().Generation(2).Obj()
	d.Spec.Selector.MatchLabels = nil
	f.Add(d, ctltest.MakeReplicaSet().Name("orphan").Obj())
	if err := dc.Sync(context.Background(), "default/web"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites("update-status deployments default/web")
	f.ExpectEvents("Warning SelectingAll This deployment is selecting all pods. A non-empty selector is required.")
}

func TestSyncCreateFailureIsRetried(t *testing.T) {
	f, dc := newFixture(t)
	f.Add(ctltest.MakeDeployment().Obj())
	f.Conn.FailOn("create", "replicasets", apierrors.NewServiceUnavailable("etcd is down"))
	err := dc.Sync(context.Background(), "default/web")
	if err == nil {
		t.Fatal("a failed create was not retried")
	}
	f.ExpectWrites("create replicasets default/web-" + hashOf(ctltest.MakeDeployment().Obj()))
	if ev := f.Recorder.Events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning ReplicaSetCreateError") {
		t.Errorf("events = %v", ev)
	}
}

func TestSyncHashCollisionBumpsCollisionCount(t *testing.T) {
	f, dc := newFixture(t)
	d := ctltest.MakeDeployment().Obj()
	squatter := ctltest.MakeReplicaSet().Name("web-" + hashOf(d)).Labels(map[string]string{"app": "other"}).
		Selector(map[string]string{"app": "other"}).Obj()
	f.Add(d, squatter)
	err := dc.Sync(context.Background(), "default/web")
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("err = %v, want AlreadyExists", err)
	}
	f.ExpectWrites("create replicasets default/"+squatter.Metadata.Name, "update-status deployments default/web")
	nd := f.Conn.Object("deployments", "default", "web").(*appsv1.Deployment)
	if nd.Status.GetCollisionCount() != 1 {
		t.Errorf("collisionCount = %d, want 1", nd.Status.GetCollisionCount())
	}
	// The next sync uses the new hash.
	f.SyncCache("deployments")
	f.Conn.ClearActions()
	if err := dc.Sync(context.Background(), "default/web"); err != nil {
		t.Fatal(err)
	}
	one := int32(1)
	f.ExpectWrites("create replicasets default/web-"+ComputeHash(d.Spec.Template, &one), "update-status deployments default/web")
}

func TestSyncMissingDeploymentDoesNothing(t *testing.T) {
	f, dc := newFixture(t)
	if err := dc.Sync(context.Background(), "default/gone"); err != nil {
		t.Fatal(err)
	}
	if a := f.Conn.Actions(); len(a) != 0 {
		t.Errorf("actions = %v", a)
	}
}

func TestSyncDeletingDeploymentOnlyUpdatesStatus(t *testing.T) {
	f, dc := newFixture(t)
	d := ctltest.MakeDeployment().Image("web:2").Generation(2).Obj()
	d.Metadata.DeletionTimestamp = d.Metadata.CreationTimestamp
	old := ownedRS(ctltest.MakeDeployment().Obj(), 3, "1")
	f.Add(d, old)
	if err := dc.Sync(context.Background(), "default/web"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites("update-status deployments default/web")
}

func TestSyncRecreateWaitsForOldPods(t *testing.T) {
	f, dc := newFixture(t)
	d := ctltest.MakeDeployment().Recreate().Image("web:2").Generation(2).Obj()
	old := ownedRS(ctltest.MakeDeployment().Obj(), 0, "1")
	old.Status = &appsv1.ReplicaSetStatus{ObservedGeneration: 1}
	pod := ctltest.MakePod().Name("web-old-1").Labels(map[string]string{"app": "web"}).
		OwnedBy(ctltest.Owner(old, "apps/v1", "ReplicaSet")).Phase("Running").Obj()
	f.Add(d, old, pod)
	if err := dc.Sync(context.Background(), "default/web"); err != nil {
		t.Fatal(err)
	}
	for _, a := range f.Conn.Writes() {
		if a.Verb == "create" {
			t.Fatalf("created the new ReplicaSet while an old pod runs: %v", ctltest.ActionStrings(f.Conn.Writes()))
		}
	}
}

func TestExecuteUpdatesTheSameReplicaSetTwiceWithFreshResourceVersion(t *testing.T) {
	f, dc := newFixture(t)
	d := ctltest.MakeDeployment().Obj()
	rs := ownedRS(d, 3, "1")
	f.Add(d, rs)
	first, second := proto.Clone(rs).(*appsv1.ReplicaSet), proto.Clone(rs).(*appsv1.ReplicaSet)
	first.Spec.Replicas = proto.Int32(4)
	second.Spec.Replicas = proto.Int32(5)
	plan := Plan{Writes: []Write{{Kind: UpdateReplicaSet, ReplicaSet: first}, {Kind: UpdateDeploymentStatus, Deployment: d}, {Kind: UpdateReplicaSet, ReplicaSet: second}}}
	if err := dc.execute(context.Background(), d, plan); err != nil {
		t.Fatalf("second update of the same ReplicaSet: %v", err)
	}
	if rsReplicas(f.Conn.Object("replicasets", "default", rs.Metadata.Name).(*appsv1.ReplicaSet)) != 5 {
		t.Error("the second update was lost")
	}
}
