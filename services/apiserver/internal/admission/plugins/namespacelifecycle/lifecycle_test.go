package namespacelifecycle

import (
	"context"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/admission"
)

func TestNamespaceLifecycle(t *testing.T) {
	pods, _ := apis.Lookup("", "pods")
	nsRes, _ := apis.Lookup("", "namespaces")
	nodes, _ := apis.Lookup("", "nodes")
	store := admission.NewMemory("", "namespaces",
		&corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: "live"}, Status: &corev1.NamespaceStatus{Phase: "Active"}},
		&corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: "dying", DeletionTimestamp: &metav1.Time{Seconds: 1}}, Status: &corev1.NamespaceStatus{Phase: "Terminating"}},
	)
	p := New(store, store)
	pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "x"}}
	for _, tc := range []struct {
		name    string
		a       admission.Attributes
		reason  string
		message string
	}{
		{name: "create in an active namespace", a: admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "live", Name: "x", Object: pod}},
		{name: "create in a missing namespace", a: admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "gone", Name: "x", Object: pod},
			reason: apierrors.ReasonNotFound, message: `namespaces "gone" not found`},
		{name: "create in a terminating namespace", a: admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "dying", Name: "x", Object: pod},
			reason: apierrors.ReasonForbidden, message: `pods "x" is forbidden: unable to create new content in namespace dying because it is being terminated`},
		{name: "update in a terminating namespace", a: admission.Attributes{Operation: admission.Update, Resource: pods, Namespace: "dying", Name: "x", Object: pod}},
		{name: "cluster-scoped create", a: admission.Attributes{Operation: admission.Create, Resource: nodes, Name: "n1", Object: &corev1.Node{}}},
		{name: "delete kube-system", a: admission.Attributes{Operation: admission.Delete, Resource: nsRes, Name: "kube-system"},
			reason: apierrors.ReasonForbidden, message: `namespaces "kube-system" is forbidden: this namespace may not be deleted`},
		{name: "delete an ordinary namespace", a: admission.Attributes{Operation: admission.Delete, Resource: nsRes, Name: "live"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Validate(context.Background(), &tc.a)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if got := apierrors.ReasonForError(err); got != tc.reason || err.Error() != tc.message {
				t.Fatalf("err = %v (%s), want %s %q", err, got, tc.reason, tc.message)
			}
		})
	}
}

// Right after a namespace's delete the cache may still show it Active;
// creates in it read storage, which shows it Terminating, until the TTL.
func TestCreateRightAfterDeleteReadsStorage(t *testing.T) {
	pods, _ := apis.Lookup("", "pods")
	nsRes, _ := apis.Lookup("", "namespaces")
	cache := admission.NewMemory("", "namespaces",
		&corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: "team"}, Status: &corev1.NamespaceStatus{Phase: "Active"}})
	storage := admission.NewMemory("", "namespaces",
		&corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: "team", DeletionTimestamp: &metav1.Time{Seconds: 1}}, Status: &corev1.NamespaceStatus{Phase: "Terminating"}})
	p := New(cache, storage)
	now := time.Unix(1000, 0)
	p.now = func() time.Time { return now }
	create := admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "team", Name: "x", Object: &corev1.Pod{}}
	if err := p.Validate(context.Background(), &create); err != nil {
		t.Fatalf("before any delete the cache decides (Active): %v", err)
	}
	if err := p.Validate(context.Background(), &admission.Attributes{Operation: admission.Delete, Resource: nsRes, Name: "team"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(context.Background(), &create); apierrors.ReasonForError(err) != apierrors.ReasonForbidden {
		t.Fatalf("create right after the delete: %v, want Forbidden", err)
	}
	now = now.Add(liveLookupTTL + time.Second)
	if err := p.Validate(context.Background(), &create); err != nil {
		t.Fatalf("after the TTL the cache decides again: %v", err)
	}
}
