package controller_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"podline.dev/pkg/clock"
	"podline.dev/pkg/labels"
	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/controller-manager/internal/controller"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

func TestKindsCoverTheResourceTable(t *testing.T) {
	for _, res := range apis.Resources {
		k, ok := controller.KindFor(res.Group.GroupVersion(), res.Kind)
		if !ok || k.Resource.Name != res.Name {
			t.Errorf("no Kind for %s %s", res.Group.GroupVersion(), res.Kind)
		}
	}
	if len(controller.Kinds) != len(apis.Resources) {
		t.Errorf("%d kinds for %d resources", len(controller.Kinds), len(apis.Resources))
	}
}

func TestInformerIsSharedPerResource(t *testing.T) {
	f := ctltest.NewFixture(t)
	a := controller.Informer[*corev1.Pod](f.Context)
	k, _ := controller.KindFor("v1", "Pod")
	if b := k.Informer(f.Context); a != b {
		t.Error("the typed and the untyped informer of pods differ")
	}
}

func TestExpectations(t *testing.T) {
	clk := clock.NewFake(ctltest.Epoch)
	e := controller.NewExpectations(clk)
	if !e.Satisfied("rs") {
		t.Fatal("a key never seen is not satisfied")
	}
	e.ExpectCreations("rs", 2)
	e.CreationObserved("rs")
	if e.Satisfied("rs") {
		t.Fatal("satisfied with a creation outstanding")
	}
	e.CreationObserved("rs")
	e.CreationObserved("rs") // extra observations do not go negative
	if !e.Satisfied("rs") {
		t.Fatal("not satisfied after every creation was observed")
	}
	e.ExpectDeletions("rs", []string{"default/a", "default/b"})
	e.DeletionObserved("rs", "default/a")
	e.DeletionObserved("rs", "default/a")
	e.DeletionObserved("rs", "default/unrelated")
	if add, del := e.Pending("rs"); add != 0 || del != 1 {
		t.Fatalf("pending = %d, %d; want 0, 1", add, del)
	}
	clk.Step(controller.ExpectationsTimeout + time.Second)
	if !e.Satisfied("rs") {
		t.Error("expired expectations still hold the key")
	}
	e.Delete("rs")
	if add, del := e.Pending("rs"); add+del != 0 {
		t.Error("Delete kept expectations")
	}
}

func TestIsPodAvailable(t *testing.T) {
	t0 := ctltest.Epoch
	ready := ctltest.MakePod().Ready(t0).Obj()
	tests := []struct {
		name     string
		pod      *corev1.Pod
		minReady int32
		now      time.Time
		want     bool
	}{
		{"ready, no minReadySeconds", ready, 0, t0, true},
		{"ready for less than minReadySeconds", ready, 10, t0.Add(5 * time.Second), false},
		{"ready for longer than minReadySeconds", ready, 10, t0.Add(11 * time.Second), true},
		{"not ready", ctltest.MakePod().Obj(), 0, t0, false},
	}
	for _, tt := range tests {
		if got := controller.IsPodAvailable(tt.pod, tt.minReady, tt.now); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRefManagerClaims(t *testing.T) {
	f := ctltest.NewFixture(t)
	rs := ctltest.MakeReplicaSet().Obj()
	other := ctltest.MakeReplicaSet().Name("other").Obj()
	web := map[string]string{"app": "web"}
	pods := []*corev1.Pod{
		ctltest.MakePod().Name("mine").Labels(web).OwnedBy(ctltest.Owner(rs, "apps/v1", "ReplicaSet")).Obj(),
		ctltest.MakePod().Name("orphan").Labels(web).Obj(),
		ctltest.MakePod().Name("orphan-unmatched").Label("app", "db").Obj(),
		ctltest.MakePod().Name("mine-unmatched").Label("app", "db").OwnedBy(ctltest.Owner(rs, "apps/v1", "ReplicaSet")).Obj(),
		ctltest.MakePod().Name("theirs").Labels(web).OwnedBy(ctltest.Owner(other, "apps/v1", "ReplicaSet")).Obj(),
		ctltest.MakePod().Name("orphan-terminating").Labels(web).Terminating(ctltest.Epoch).Obj(),
	}
	for _, p := range pods {
		f.Add(p)
	}
	rechecks := 0
	m := controller.NewRefManager(rs, controller.ResourceOf[*appsv1.ReplicaSet](), labels.SelectorFromSet(web),
		clientFor(f), func(context.Context) (object.Object, error) { rechecks++; return rs, nil })
	claimed, err := m.Claim(context.Background(), pods)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range claimed {
		names = append(names, p.GetMetadata().GetName())
	}
	if !slices.Equal(names, []string{"mine", "orphan"}) {
		t.Errorf("claimed %v, want mine and orphan", names)
	}
	f.ExpectWrites("update pods default/orphan", "update pods default/mine-unmatched")
	if rechecks != 1 {
		t.Errorf("rechecked the owner %d times, want once", rechecks)
	}
}
