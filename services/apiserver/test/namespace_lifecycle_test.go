package test

import (
	"testing"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// A namespace is born with the "kubernetes" finalizer; deleting it leaves
// it Terminating (no new objects in it) until that finalizer is removed —
// the namespace controller's last step — and then it is gone.
func TestNamespaceTerminatesUntilFinalized(t *testing.T) {
	s, pods := startServer(t)
	ctx := ctxFor(t)
	nss := client.For[*corev1.Namespace](s.Conn)
	ns, err := nss.Create(ctx, &corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: "doomed"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ns.GetSpec().GetFinalizers(); len(got) != 1 || got[0] != "kubernetes" {
		t.Fatalf("spec.finalizers %v, want [kubernetes]", got)
	}
	if ns.GetStatus().GetPhase() != "Active" {
		t.Fatalf("phase %q", ns.GetStatus().GetPhase())
	}
	if _, err := nss.Delete(ctx, "", "doomed", nil); err != nil {
		t.Fatal(err)
	}
	term, err := nss.Get(ctx, "", "doomed")
	if err != nil {
		t.Fatalf("namespace gone at once: %v", err)
	}
	if term.GetStatus().GetPhase() != "Terminating" || term.GetMetadata().GetDeletionTimestamp() == nil {
		t.Fatalf("after delete: phase %q, deletionTimestamp %v", term.GetStatus().GetPhase(), term.GetMetadata().GetDeletionTimestamp())
	}
	p := pod("late", nil)
	p.Metadata.Namespace = "doomed"
	if _, err := pods.Create(ctx, p); !apierrors.IsForbidden(err) {
		t.Errorf("create in a terminating namespace: %v, want Forbidden", err)
	}
	fin := object.Copy(term)
	fin.Spec.Finalizers = nil
	if _, err := nss.Update(ctx, fin); err != nil {
		t.Fatal(err)
	}
	if _, err := nss.Get(ctx, "", "doomed"); !apierrors.IsNotFound(err) {
		t.Fatalf("finalized namespace still there: %v", err)
	}
}
