package namespace

import (
	"context"
	"slices"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
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

func terminating(name string) *corev1.Namespace {
	ns := ctltest.Namespace(name)
	ns.Metadata.DeletionTimestamp = &metav1.Time{Seconds: ctltest.Epoch.Unix()}
	ns.Metadata.Finalizers = []string{FinalizerKubernetes}
	ns.Spec.Finalizers = []string{FinalizerKubernetes}
	return ns
}

func content(ns string) []*corev1.Pod {
	return []*corev1.Pod{
		ctltest.MakePod().Name("a").Namespace(ns).Obj(),
		ctltest.MakePod().Name("b").Namespace(ns).Obj(),
	}
}

func writes(f *ctltest.Fixture) []string { return ctltest.ActionStrings(f.Conn.Writes()) }

func TestDeletingNamespaceDeletesContentThenFinalizes(t *testing.T) {
	f, nc := newFixture(t)
	f.Add(terminating("team"))
	for _, p := range append(content("team"), content("default")...) {
		f.Add(p)
	}
	f.Add(ctltest.MakeDeployment().Obj())
	cm := &corev1.ConfigMap{Metadata: &metav1.ObjectMeta{Name: "cfg", Namespace: "team"}}
	f.Add(cm)
	if err := nc.Sync(context.Background(), "team"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"update-status namespaces team",
		"delete pods team/a", "delete pods team/b",
		"delete configmaps team/cfg",
		"update namespaces team",
	}
	if got := writes(f); !slices.Equal(got, want) {
		t.Errorf("writes:\n got %v\nwant %v", got, want)
	}
	if f.Conn.Object("namespaces", "", "team") != nil {
		t.Error("the namespace was not finalized away")
	}
	if n := len(f.Conn.Objects("pods")); n != 2 {
		t.Errorf("%d pods left, want default's 2", n)
	}
}

func TestContentThatLingersDelaysFinalization(t *testing.T) {
	f, nc := newFixture(t)
	f.Add(terminating("team"))
	held := ctltest.MakePod().Name("held").Namespace("team").Obj()
	held.Metadata.Finalizers = []string{"example.com/hold"}
	f.Add(held)
	if err := nc.Sync(context.Background(), "team"); err != nil {
		t.Fatal(err)
	}
	if got := writes(f); !slices.Equal(got, []string{"update-status namespaces team", "delete pods team/held"}) {
		t.Errorf("writes = %v", got)
	}
	if f.Conn.Object("namespaces", "", "team") == nil {
		t.Fatal("finalized while content remains")
	}
	// The finalizer goes; the retry finalizes.
	f.Conn.Remove("pods", "team", "held")
	f.SyncCache("namespaces")
	f.Conn.ClearActions()
	if err := nc.Sync(context.Background(), "team"); err != nil {
		t.Fatal(err)
	}
	if got := writes(f); !slices.Equal(got, []string{"update namespaces team"}) {
		t.Errorf("writes = %v", got)
	}
}

func TestNamespaceDeletedOutrightStillLosesItsContent(t *testing.T) {
	f, nc := newFixture(t)
	for _, p := range content("gone") {
		f.Add(p)
	}
	if err := nc.Sync(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	if got := writes(f); !slices.Equal(got, []string{"delete pods gone/a", "delete pods gone/b"}) {
		t.Errorf("writes = %v", got)
	}
}

func TestRecreatedNamespaceIsLeftAlone(t *testing.T) {
	f, nc := newFixture(t)
	f.Conn.Seed(ctltest.Namespace("team")) // the apiserver has it; the cache not yet
	for _, p := range content("team") {
		f.Add(p)
	}
	if err := nc.Sync(context.Background(), "team"); err != nil {
		t.Fatal(err)
	}
	if got := writes(f); len(got) != 0 {
		t.Errorf("writes = %v", got)
	}
}

func TestActiveNamespaceIsLeftAlone(t *testing.T) {
	f, nc := newFixture(t)
	f.Add(ctltest.Namespace("team"))
	f.Add(content("team")[0])
	if err := nc.Sync(context.Background(), "team"); err != nil {
		t.Fatal(err)
	}
	if got := writes(f); len(got) != 0 {
		t.Errorf("writes = %v", got)
	}
}
