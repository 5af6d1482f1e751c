package test

import (
	"strconv"
	"sync"
	"testing"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	metav1 "podline.dev/proto/meta/v1"
)

func TestCreateSetsServerFieldsAndGetReadsThemBack(t *testing.T) {
	ctx := ctxFor(t)
	_, pods := startServer(t)
	created, err := pods.Create(ctx, pod("web", nil))
	if err != nil {
		t.Fatal(err)
	}
	md := created.GetMetadata()
	if md.GetUid() == "" || md.GetCreationTimestamp() == nil || md.GetResourceVersion() == "" {
		t.Fatalf("server fields not set: %v", md)
	}
	if created.GetApiVersion() != "v1" || created.GetKind() != "Pod" {
		t.Fatalf("type meta %q %q", created.GetApiVersion(), created.GetKind())
	}
	if created.GetStatus().GetPhase() != "Pending" || md.GetGeneration() != 1 {
		t.Fatalf("phase %q generation %d", created.GetStatus().GetPhase(), md.GetGeneration())
	}
	got, err := pods.Get(ctx, "default", "web")
	if err != nil {
		t.Fatal(err)
	}
	if got.GetMetadata().GetResourceVersion() != md.GetResourceVersion() || got.GetMetadata().GetUid() != md.GetUid() {
		t.Fatalf("get returned %v, created %v", got.GetMetadata(), md)
	}
	if _, err := pods.Create(ctx, pod("web", nil)); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := pods.Get(ctx, "default", "nope"); !apierrors.IsNotFound(err) || err.Error() != `pods "nope" not found` {
		t.Fatalf("get missing: %v", err)
	}
}

func TestGenerateNameAppendsFiveCharacters(t *testing.T) {
	ctx := ctxFor(t)
	_, pods := startServer(t)
	p := pod("", nil)
	p.Metadata.GenerateName = "web-"
	created, err := pods.Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if n := created.GetMetadata().GetName(); len(n) != len("web-")+5 || n[:4] != "web-" {
		t.Fatalf("generated name %q", n)
	}
}

func TestConcurrentUpdatesFromOneVersionExactlyOneWins(t *testing.T) {
	ctx := ctxFor(t)
	_, pods := startServer(t)
	created, err := pods.Create(ctx, pod("web", nil))
	if err != nil {
		t.Fatal(err)
	}
	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := object.Copy(created)
			p.Metadata.Labels = map[string]string{"writer": strconv.Itoa(i)}
			_, errs[i] = pods.Update(ctx, p)
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case apierrors.IsConflict(err):
			want := `Operation cannot be fulfilled on pods "web": the object has been modified; please apply your changes to the latest version and try again`
			if err.Error() != want {
				t.Fatalf("conflict message %q", err.Error())
			}
		default:
			t.Fatalf("unexpected error %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d updates won, want exactly 1", wins)
	}
}

func TestStatusSubresourceAndGeneration(t *testing.T) {
	ctx := ctxFor(t)
	_, pods := startServer(t)
	created, err := pods.Create(ctx, pod("web", nil))
	if err != nil {
		t.Fatal(err)
	}
	// The main resource ignores status; a label change keeps the generation.
	p := object.Copy(created)
	p.Status.Phase = "Running"
	p.Metadata.Labels = map[string]string{"a": "b"}
	updated, err := pods.Update(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if updated.GetStatus().GetPhase() != "Pending" || updated.GetMetadata().GetGeneration() != 1 {
		t.Fatalf("after update: phase %q generation %d", updated.GetStatus().GetPhase(), updated.GetMetadata().GetGeneration())
	}
	// The status subresource changes status only.
	s := object.Copy(updated)
	s.Status.Phase = "Running"
	s.Spec.Containers[0].Image = "other"
	st, err := pods.UpdateStatus(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if st.GetStatus().GetPhase() != "Running" || st.GetSpec().GetContainers()[0].GetImage() == "other" {
		t.Fatalf("status update: phase %q image %q", st.GetStatus().GetPhase(), st.GetSpec().GetContainers()[0].GetImage())
	}
	// A spec change bumps the generation.
	g := object.Copy(st)
	g.Spec.ActiveDeadlineSeconds = ptr(int64(60))
	gen, err := pods.Update(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if gen.GetMetadata().GetGeneration() != 2 {
		t.Fatalf("generation %d after spec change", gen.GetMetadata().GetGeneration())
	}
}

func ptr[T any](v T) *T { return &v }

func TestFinalizersHoldDeletionUntilEmptied(t *testing.T) {
	ctx := ctxFor(t)
	_, pods := startServer(t)
	p := pod("web", nil)
	p.Metadata.Finalizers = []string{"example.com/hold"}
	if _, err := pods.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	marked, err := pods.Delete(ctx, "default", "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if marked.GetMetadata().GetDeletionTimestamp() == nil {
		t.Fatal("delete with a finalizer did not set deletionTimestamp")
	}
	still, err := pods.Get(ctx, "default", "web")
	if err != nil {
		t.Fatalf("object gone while a finalizer holds it: %v", err)
	}
	still.Metadata.Finalizers = nil
	if _, err := pods.Update(ctx, still); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "default", "web"); !apierrors.IsNotFound(err) {
		t.Fatalf("after emptying finalizers: %v", err)
	}
}

func TestBoundPodDeletesGracefully(t *testing.T) {
	ctx := ctxFor(t)
	_, pods := startServer(t)
	p := pod("web", nil)
	p.Spec.NodeName = "worker-1"
	if _, err := pods.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	marked, err := pods.Delete(ctx, "default", "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if marked.GetMetadata().GetDeletionGracePeriodSeconds() != 30 {
		t.Fatalf("grace %d, want 30", marked.GetMetadata().GetDeletionGracePeriodSeconds())
	}
	// The kubelet confirms with grace 0 once containers are gone.
	if _, err := pods.Delete(ctx, "default", "web", &metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))}); err != nil {
		t.Fatal(err)
	}
	if _, err := pods.Get(ctx, "default", "web"); !apierrors.IsNotFound(err) {
		t.Fatalf("after grace 0: %v", err)
	}
}

func TestStaleDeleteIsAConflict(t *testing.T) {
	ctx := ctxFor(t)
	_, pods := startServer(t)
	created, _ := pods.Create(ctx, pod("web", nil))
	p := object.Copy(created)
	p.Metadata.Labels = map[string]string{"x": "y"}
	if _, err := pods.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	_, err := pods.Delete(ctx, "default", "web", &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr(created.GetMetadata().GetResourceVersion())}})
	if !apierrors.IsConflict(err) {
		t.Fatalf("stale delete: %v", err)
	}
}
