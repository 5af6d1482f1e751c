package compat

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A Pod's whole life through the typed clientset: create, get, list by
// label, update, update status, delete, and then it is gone.
func TestPodCreateGetListUpdateDelete(t *testing.T) {
	ctx := ctxFor(t)
	_, cs := start(t)
	pods := cs.CoreV1().Pods(metav1.NamespaceDefault)

	created, err := pods.Create(ctx, makePod("web").label("app", "web").obj(), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() || created.Namespace != "default" {
		t.Fatalf("created pod lacks server-set metadata: %+v", created.ObjectMeta)
	}
	if created.Spec.Containers[0].Image != "registry.podline:5000/demo/web:1.0" {
		t.Fatalf("created spec: %+v", created.Spec)
	}
	if _, err := pods.Create(ctx, makePod("db").label("app", "db").obj(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create db: %v", err)
	}

	got, err := pods.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.UID != created.UID || got.ResourceVersion != created.ResourceVersion {
		t.Fatalf("get: %+v, created %+v", got.ObjectMeta, created.ObjectMeta)
	}

	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "web" || list.ResourceVersion == "" {
		t.Fatalf("list app=web: rv %q, %d items", list.ResourceVersion, len(list.Items))
	}
	all, err := cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil || len(all.Items) != 2 {
		t.Fatalf("list all namespaces: %v, %v", all, err)
	}

	got.Labels["tier"] = "front"
	updated, err := pods.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if updated.Labels["tier"] != "front" || updated.ResourceVersion == got.ResourceVersion {
		t.Fatalf("update: labels %v, rv %q -> %q", updated.Labels, got.ResourceVersion, updated.ResourceVersion)
	}

	updated.Status.Phase = corev1.PodRunning
	updated.Status.PodIP = "10.244.1.7"
	withStatus, err := pods.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if withStatus.Status.Phase != corev1.PodRunning || withStatus.Status.PodIP != "10.244.1.7" {
		t.Fatalf("update status: %+v", withStatus.Status)
	}

	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := pods.Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
	list, err = pods.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "db" {
		t.Fatalf("list after delete: %v, %v", list, err)
	}
}

// Every failure comes back as the apierrors kind and message client-go
// code tests for.
func TestPodErrorsAreKubernetesStatuses(t *testing.T) {
	ctx := ctxFor(t)
	_, cs := start(t)
	pods := cs.CoreV1().Pods(metav1.NamespaceDefault)
	original, err := pods.Create(ctx, makePod("web").obj(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Someone else changes it: original is now stale.
	fresh := original.DeepCopy()
	fresh.Labels = map[string]string{"changed": "yes"}
	fresh, err = pods.Update(ctx, fresh, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := original.DeepCopy()
	stale.Labels = map[string]string{"mine": "yes"}
	wrongUID := types.UID("00000000-0000-0000-0000-000000000000")

	tests := []struct {
		name    string
		call    func() error
		is      func(error) bool
		code    int32
		message string // the whole message, or its end after "Operation cannot be fulfilled on pods "web": ...: "
	}{
		{
			name:    "create of an existing name is AlreadyExists",
			call:    func() error { _, err := pods.Create(ctx, makePod("web").obj(), metav1.CreateOptions{}); return err },
			is:      apierrors.IsAlreadyExists,
			code:    409,
			message: `pods "web" already exists`,
		},
		{
			name:    "update at a stale resourceVersion is Conflict",
			call:    func() error { _, err := pods.Update(ctx, stale, metav1.UpdateOptions{}); return err },
			is:      apierrors.IsConflict,
			code:    409,
			message: `Operation cannot be fulfilled on pods "web": the object has been modified; please apply your changes to the latest version and try again`,
		},
		{
			name:    "status update at a stale resourceVersion is Conflict",
			call:    func() error { _, err := pods.UpdateStatus(ctx, stale, metav1.UpdateOptions{}); return err },
			is:      apierrors.IsConflict,
			code:    409,
			message: `Operation cannot be fulfilled on pods "web": the object has been modified; please apply your changes to the latest version and try again`,
		},
		{
			name:    "get of a missing name is NotFound",
			call:    func() error { _, err := pods.Get(ctx, "nope", metav1.GetOptions{}); return err },
			is:      apierrors.IsNotFound,
			code:    404,
			message: `pods "nope" not found`,
		},
		{
			name:    "update of a missing name is NotFound",
			call:    func() error { _, err := pods.Update(ctx, makePod("nope").obj(), metav1.UpdateOptions{}); return err },
			is:      apierrors.IsNotFound,
			code:    404,
			message: `pods "nope" not found`,
		},
		{
			name:    "delete of a missing name is NotFound",
			call:    func() error { return pods.Delete(ctx, "nope", metav1.DeleteOptions{}) },
			is:      apierrors.IsNotFound,
			code:    404,
			message: `pods "nope" not found`,
		},
		{
			name:    "get in a missing namespace is NotFound",
			call:    func() error { _, err := cs.CoreV1().Pods("nowhere").Get(ctx, "web", metav1.GetOptions{}); return err },
			is:      apierrors.IsNotFound,
			code:    404,
			message: `pods "web" not found`,
		},
		{
			// Kubernetes' message here names the storage key
			// ("StorageError: invalid object, ..."); only the reason is checked.
			name: "delete with a stale resourceVersion precondition is Conflict",
			call: func() error {
				return pods.Delete(ctx, "web", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &original.ResourceVersion}})
			},
			is:   apierrors.IsConflict,
			code: 409,
		},
		{
			name: "delete with a wrong UID precondition is Conflict",
			call: func() error {
				return pods.Delete(ctx, "web", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}})
			},
			is:      apierrors.IsConflict,
			code:    409,
			message: "Precondition failed: UID in precondition: " + string(wrongUID) + ", UID in object meta: " + string(original.UID),
		},
		{
			name: "an invalid object is Invalid",
			call: func() error {
				_, err := pods.Create(ctx, makePod("Not_A_Name").obj(), metav1.CreateOptions{})
				return err
			},
			is:      apierrors.IsInvalid,
			code:    422,
			message: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !tt.is(err) {
				t.Fatalf("got %v (%T, reason %q)", err, err, apierrors.ReasonForError(err))
			}
			status, ok := err.(apierrors.APIStatus)
			if !ok {
				t.Fatalf("%T is not an APIStatus", err)
			}
			if got := status.Status().Code; got != tt.code {
				t.Errorf("code %d, want %d", got, tt.code)
			}
			if tt.message != "" && err.Error() != tt.message && !strings.HasSuffix(err.Error(), ": "+tt.message) {
				t.Errorf("message\n got: %s\nwant: %s", err.Error(), tt.message)
			}
		})
	}
}
