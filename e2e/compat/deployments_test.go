package compat

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// A Deployment through the apps/v1 typed client: create, get, list, scale
// by update, write status, refuse a stale update with Kubernetes' message,
// delete.
func TestDeploymentCreateGetListUpdateDelete(t *testing.T) {
	ctx := ctxFor(t)
	_, cs := start(t)
	deployments := cs.AppsV1().Deployments(metav1.NamespaceDefault)

	d := makeDeployment("web", 2)
	maxSurge := intstr.FromString("25%")
	maxUnavailable := intstr.FromInt32(1)
	d.Spec.Strategy = appsv1.DeploymentStrategy{
		Type:          appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &maxSurge, MaxUnavailable: &maxUnavailable},
	}
	created, err := deployments.Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.UID == "" || created.Generation != 1 || *created.Spec.Replicas != 2 {
		t.Fatalf("created: %+v", created)
	}
	if ru := created.Spec.Strategy.RollingUpdate; ru == nil || *ru.MaxSurge != maxSurge || *ru.MaxUnavailable != maxUnavailable {
		t.Fatalf("int-or-string fields did not round-trip: %+v", created.Spec.Strategy)
	}
	if _, err := deployments.Create(ctx, makeDeployment("web", 1), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) ||
		err.Error() != `deployments.apps "web" already exists` {
		t.Fatalf("second create: %v", err)
	}

	got, err := deployments.Get(ctx, "web", metav1.GetOptions{})
	if err != nil || got.UID != created.UID {
		t.Fatalf("get: %v, %v", got, err)
	}
	list, err := deployments.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "web" {
		t.Fatalf("list: %v, %v", list, err)
	}

	stale := got.DeepCopy()
	*got.Spec.Replicas = 5
	scaled, err := deployments.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("scale: %v", err)
	}
	if *scaled.Spec.Replicas != 5 {
		t.Fatalf("scaled to %d", *scaled.Spec.Replicas)
	}

	*stale.Spec.Replicas = 3
	_, err = deployments.Update(ctx, stale, metav1.UpdateOptions{})
	want := `Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again`
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Fatalf("stale update: %v", err)
	}

	scaled.Status = appsv1.DeploymentStatus{ObservedGeneration: scaled.Generation, Replicas: 5, ReadyReplicas: 4, AvailableReplicas: 4, UpdatedReplicas: 5}
	withStatus, err := deployments.UpdateStatus(ctx, scaled, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if withStatus.Status.ReadyReplicas != 4 || *withStatus.Spec.Replicas != 5 {
		t.Fatalf("update status: %+v", withStatus.Status)
	}
	if _, err := deployments.UpdateStatus(ctx, scaled, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale status update: %v", err)
	}

	if err := deployments.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := deployments.Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) || err.Error() != `deployments.apps "web" not found` {
		t.Fatalf("get after delete: %v", err)
	}
	if err := deployments.Delete(ctx, "web", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("second delete: %v", err)
	}
}
