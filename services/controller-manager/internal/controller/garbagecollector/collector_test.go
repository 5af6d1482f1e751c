package garbagecollector

import (
	"context"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/controller-manager/internal/controller"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

// harness runs the collector against a FakeConn, playing the informers:
// after each round of work it tells the graph what changed in the tracker.
type harness struct {
	t    *testing.T
	f    *ctltest.Fixture
	gc   *Controller
	seen map[string]object.Object // resource/key -> last state shown to the graph
}

func newHarness(t *testing.T) *harness {
	f := ctltest.NewFixture(t)
	gc, err := New(f.Context)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		gc.changes.ShutDown()
		gc.attemptToDelete.ShutDown()
		gc.attemptToOrphan.ShutDown()
	})
	return &harness{t: t, f: f, gc: gc, seen: map[string]object.Object{}}
}

// add stores objects and lets the informers show them.
func (h *harness) add(objs ...object.Object) {
	h.f.Conn.Seed(objs...)
	h.observe()
}

func resourceOf(o object.Object) apis.Resource {
	r, _ := apis.ByMessage(string(o.ProtoReflect().Descriptor().FullName()))
	return r
}

// observe sends the graph an event for each change in the tracker since
// the last call, as the informers would.
func (h *harness) observe() bool {
	changed := false
	now := map[string]object.Object{}
	for _, k := range controller.Kinds {
		for _, o := range h.f.Conn.Objects(k.Resource.Name) {
			now[k.Resource.Name+"/"+object.Key(o)] = o
		}
	}
	keys := make([]string, 0, len(now))
	for k := range now {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		o := now[key]
		old, ok := h.seen[key]
		switch {
		case !ok:
			h.gc.changes.Add(&event{typ: addEvent, obj: o, res: resourceOf(o)})
			changed = true
		case old.GetMetadata().GetResourceVersion() != o.GetMetadata().GetResourceVersion():
			h.gc.changes.Add(&event{typ: updateEvent, obj: o, old: old, res: resourceOf(o)})
			changed = true
		}
	}
	for key, old := range h.seen {
		if _, ok := now[key]; !ok {
			h.gc.changes.Add(&event{typ: deleteEvent, obj: old, res: resourceOf(old)})
			changed = true
		}
	}
	h.seen = now
	return changed
}

// run works every queue until nothing changes.
func (h *harness) run() {
	h.t.Helper()
	ctx := context.Background()
	for range 50 {
		progressed := false
		for h.gc.changes.Len() > 0 {
			h.gc.processGraphChange()
			progressed = true
		}
		for h.gc.attemptToDelete.Len() > 0 {
			h.gc.processNext(ctx, h.gc.attemptToDelete, h.gc.attemptToDeleteItem)
			progressed = true
		}
		for h.gc.attemptToOrphan.Len() > 0 {
			h.gc.processNext(ctx, h.gc.attemptToOrphan, h.gc.attemptToOrphanItem)
			progressed = true
		}
		if h.observe() {
			progressed = true
		}
		if !progressed {
			return
		}
	}
	h.t.Fatal("the collector did not settle")
}

func (h *harness) names(resource string) []string {
	var out []string
	for _, o := range h.f.Conn.Objects(resource) {
		out = append(out, o.GetMetadata().GetName())
	}
	return out
}

func (h *harness) writes() []string {
	w := ctltest.ActionStrings(h.f.Conn.Writes())
	return w
}

var webLabels = map[string]string{"app": "web"}

func rsOwnedBy(d object.Object) *ctltest.ReplicaSetWrapper {
	return ctltest.MakeReplicaSet().Name("web-abc").OwnedBy(ctltest.Owner(d, "apps/v1", "Deployment"))
}

func podOwnedBy(rs object.Object, name string) object.Object {
	return ctltest.MakePod().Name(name).Labels(webLabels).OwnedBy(ctltest.Owner(rs, "apps/v1", "ReplicaSet")).Obj()
}

func deleting(o object.Object, finalizer string) object.Object {
	md := o.GetMetadata()
	md.DeletionTimestamp = &metav1.Time{Seconds: ctltest.Epoch.Unix()}
	md.Finalizers = append(md.Finalizers, finalizer)
	md.ResourceVersion = "" // a new version
	return o
}

func TestBackgroundDeletionCollectsDanglingDependents(t *testing.T) {
	h := newHarness(t)
	d := ctltest.MakeDeployment().Obj() // deleted already: never added
	rs := rsOwnedBy(d).Obj()
	h.add(rs, podOwnedBy(rs, "web-abc-1"), podOwnedBy(rs, "web-abc-2"))
	h.run()
	if rss, pods := h.names("replicasets"), h.names("pods"); len(rss)+len(pods) != 0 {
		t.Errorf("left: replicasets %v pods %v", rss, pods)
	}
	w := h.writes()
	if len(w) != 3 || w[0] != "delete replicasets default/web-abc" {
		t.Errorf("writes = %v", w)
	}
	for _, a := range h.f.Conn.Writes() {
		if a.Options.GetPreconditions().GetUid() == "" || a.Options.GetPropagationPolicy() != PropagationBackground {
			t.Errorf("%s: options %v, want a UID precondition and Background", a, a.Options)
		}
	}
}

func TestExistingOwnerKeepsDependents(t *testing.T) {
	h := newHarness(t)
	d := ctltest.MakeDeployment().Obj()
	rs := rsOwnedBy(d).Obj()
	h.add(rs, podOwnedBy(rs, "p")) // the dependents are seen before their owner
	h.add(d)
	h.run()
	if w := h.writes(); len(w) != 0 {
		t.Errorf("writes = %v", w)
	}
}

func TestOrphanDeletionLeavesDependents(t *testing.T) {
	h := newHarness(t)
	d := ctltest.MakeDeployment().Obj()
	rs := rsOwnedBy(d).Obj()
	h.add(d, rs, podOwnedBy(rs, "p"))
	h.run()
	h.add(deleting(object.Copy(d), FinalizerOrphan))
	h.run()
	if got := h.writes(); !slices.Equal(got, []string{"update replicasets default/web-abc", "update deployments default/web"}) {
		t.Errorf("writes = %v", got)
	}
	if ds := h.names("deployments"); len(ds) != 0 {
		t.Errorf("the deployment is still there: %v", ds)
	}
	left := h.f.Conn.Object("replicasets", "default", "web-abc")
	if left == nil || len(left.GetMetadata().GetOwnerReferences()) != 0 {
		t.Errorf("replica set not orphaned: %v", left)
	}
	if pods := h.names("pods"); len(pods) != 1 {
		t.Errorf("pods = %v", pods)
	}
}

func TestForegroundDeletionDeletesDependentsFirst(t *testing.T) {
	h := newHarness(t)
	d := ctltest.MakeDeployment().Obj()
	rs := rsOwnedBy(d).Obj()
	h.add(d, rs, podOwnedBy(rs, "p1"), podOwnedBy(rs, "p2"))
	h.run()
	h.add(deleting(object.Copy(d), FinalizerForeground))
	h.run()
	for _, res := range []string{"deployments", "replicasets", "pods"} {
		if left := h.names(res); len(left) != 0 {
			t.Errorf("%s left: %v", res, left)
		}
	}
	w := h.writes()
	// The ReplicaSet goes in the foreground too, its pods before it, the deployment last.
	if w[0] != "delete replicasets default/web-abc" || w[len(w)-1] != "update deployments default/web" {
		t.Errorf("writes = %v", w)
	}
	if p := h.f.Conn.Writes()[0].Options.GetPropagationPolicy(); p != PropagationForeground {
		t.Errorf("replica set deleted with %q, want Foreground", p)
	}
	podDeletes := 0
	for i, a := range w {
		if a == "update replicasets default/web-abc" && podDeletes != 2 {
			t.Errorf("the ReplicaSet's finalizer went at write %d before its pods", i)
		}
		if a == "delete pods default/p1" || a == "delete pods default/p2" {
			podDeletes++
		}
	}
}

func TestForegroundOwnerWaitsForBlockingDependents(t *testing.T) {
	h := newHarness(t)
	d := ctltest.MakeDeployment().Obj()
	rs := rsOwnedBy(d).Obj()
	// The ReplicaSet has its own finalizer, so it lingers after its delete.
	rs.Metadata.Finalizers = []string{"example.com/hold"}
	h.add(d, rs)
	h.run()
	h.add(deleting(object.Copy(d), FinalizerForeground))
	h.run()
	if ds := h.names("deployments"); len(ds) != 1 {
		t.Fatalf("the deployment went while a blocking dependent exists")
	}
	// The dependent's own finalizer is removed by whoever holds it: it goes, and the owner follows.
	h.f.Conn.Remove("replicasets", "default", "web-abc")
	h.run()
	if ds := h.names("deployments"); len(ds) != 0 {
		t.Errorf("the deployment stayed after its dependents went: %v", h.writes())
	}
}

func TestOneOwnerGoneOtherAliveRemovesOnlyTheReference(t *testing.T) {
	h := newHarness(t)
	alive := ctltest.MakeReplicaSet().Name("alive").Obj()
	gone := ctltest.MakeReplicaSet().Name("gone").Obj()
	pod := ctltest.MakePod().Name("p").OwnedBy(ctltest.Owner(alive, "apps/v1", "ReplicaSet")).Obj()
	ref := ctltest.Owner(gone, "apps/v1", "ReplicaSet")
	ref.Controller = proto.Bool(false)
	pod.Metadata.OwnerReferences = append(pod.Metadata.OwnerReferences, ref)
	h.add(alive, pod)
	h.run()
	if got := h.writes(); !slices.Equal(got, []string{"update pods default/p"}) {
		t.Fatalf("writes = %v", got)
	}
	refs := h.f.Conn.Object("pods", "default", "p").GetMetadata().GetOwnerReferences()
	if len(refs) != 1 || refs[0].GetName() != "alive" {
		t.Errorf("ownerReferences = %v", refs)
	}
}

func TestOwnerOfUnknownKindIsLeftAlone(t *testing.T) {
	h := newHarness(t)
	pod := ctltest.MakePod().Name("p").Obj()
	pod.Metadata.OwnerReferences = []*metav1.OwnerReference{{ApiVersion: "example.com/v1", Kind: "Widget", Name: "w", Uid: "w-uid"}}
	h.add(pod)
	h.run()
	if w := h.writes(); len(w) != 0 {
		t.Errorf("writes = %v", w)
	}
}

func TestOwnerReplacedByNewObjectOfSameNameIsDangling(t *testing.T) {
	h := newHarness(t)
	old := ctltest.MakeReplicaSet().Name("rs").Obj()
	pod := podOwnedBy(old, "p")
	replacement := ctltest.MakeReplicaSet().Name("rs").UID("new-uid").Obj()
	h.add(replacement, pod)
	h.run()
	if got := h.writes(); !slices.Equal(got, []string{"delete pods default/p"}) {
		t.Errorf("writes = %v", got)
	}
}
