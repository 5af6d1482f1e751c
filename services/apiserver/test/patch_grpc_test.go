package test

import (
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"podline.dev/pkg/apierrors"
	appsv1 "podline.dev/proto/apps/v1"
	autoscalingv1 "podline.dev/proto/autoscaling/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
)

func grpcDeployment(name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	replicas := int32(1)
	return &appsv1.Deployment{
		Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: &appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: &appsv1.DeploymentStrategy{Type: "Recreate"},
			Template: &corev1.PodTemplateSpec{Metadata: &metav1.ObjectMeta{Labels: labels},
				Spec: &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: "registry.podline:5000/demo/web:1.0",
					ImagePullPolicy: "IfNotPresent", TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: "File"}},
					RestartPolicy: "Always", DnsPolicy: "ClusterFirst"}},
		},
	}
}

// The same patch, scale and deletecollection calls over native gRPC, with
// the patch type named in the request and the manager taken from the
// caller's user agent when the request names none.
func TestPatchScaleAndDeleteCollectionOverGRPC(t *testing.T) {
	ctx := ctxFor(t)
	s := apiservertest.Start(t)
	conn, err := grpc.NewClient(s.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithUserAgent("kube-controller-manager/v1.37.0"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deployments := appsv1.NewDeploymentsClient(conn)
	if _, err := deployments.Create(ctx, &appsv1.DeploymentWriteRequest{Namespace: "default", Object: grpcDeployment("web")}); err != nil {
		t.Fatal(err)
	}
	d, err := deployments.Patch(ctx, &metav1.PatchRequest{Namespace: "default", Name: "web",
		PatchType: "application/strategic-merge-patch+json",
		Data:      []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"registry.podline:5000/demo/web:2.0"}]}}}}`)})
	if err != nil || d.GetSpec().GetTemplate().GetSpec().GetContainers()[0].GetImage() != "registry.podline:5000/demo/web:2.0" {
		t.Fatalf("patch: %v %v", err, d)
	}
	managers := map[string]bool{}
	for _, e := range d.GetMetadata().GetManagedFields() {
		managers[e.GetManager()] = true
	}
	if !managers["kube-controller-manager"] {
		t.Fatalf("manager from the user agent: %v", managers)
	}
	_, err = deployments.Patch(ctx, &metav1.PatchRequest{Namespace: "default", Name: "web", PatchType: "text/plain", Data: []byte(`{}`)})
	if apierrors.ReasonForError(err) != apierrors.ReasonUnsupportedMediaType {
		t.Fatalf("unknown patch type over gRPC: %v", err)
	}
	sc, err := deployments.UpdateScale(ctx, &autoscalingv1.ScaleWriteRequest{Namespace: "default", Name: "web",
		Object: &autoscalingv1.Scale{Metadata: &metav1.ObjectMeta{Name: "web"}, Spec: &autoscalingv1.ScaleSpec{Replicas: 4}}})
	if err != nil || sc.GetSpec().GetReplicas() != 4 {
		t.Fatalf("scale: %v %v", err, sc)
	}
	list, err := deployments.DeleteCollection(ctx, &metav1.DeleteCollectionRequest{Namespace: "default", FieldSelector: "metadata.name=web"})
	if err != nil || len(list.GetItems()) != 1 {
		t.Fatalf("deletecollection: %v %v", err, list)
	}
	if _, err := deployments.Get(ctx, &metav1.GetRequest{Namespace: "default", Name: "web"}); !apierrors.IsNotFound(err) {
		t.Fatalf("after deletecollection: %v", err)
	}
}
