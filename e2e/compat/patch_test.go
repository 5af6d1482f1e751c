package compat

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
)

// rollingDeployment is makeDeployment with its rollout strategy spelled out.
func rollingDeployment(name string, replicas int32) *appsv1.Deployment {
	d := makeDeployment(name, replicas)
	surge, unavailable := intstr.FromString("25%"), intstr.FromString("25%")
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}}
	return d
}

// Each patch type through client-go's typed Patch.
func TestPatchEachTypeThroughClientGo(t *testing.T) {
	ctx := ctxFor(t)
	_, cs := start(t)
	deployments := cs.AppsV1().Deployments(metav1.NamespaceDefault)
	if _, err := deployments.Create(ctx, rollingDeployment("web", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	d, err := deployments.Patch(ctx, "web", types.MergePatchType, []byte(`{"metadata":{"labels":{"tier":"front"}}}`), metav1.PatchOptions{})
	if err != nil || d.Labels["tier"] != "front" {
		t.Fatalf("merge patch: %v %v", err, d)
	}
	d, err = deployments.Patch(ctx, "web", types.JSONPatchType,
		[]byte(`[{"op":"test","path":"/spec/replicas","value":2},{"op":"replace","path":"/spec/replicas","value":4}]`), metav1.PatchOptions{})
	if err != nil || *d.Spec.Replicas != 4 || d.Generation != 2 {
		t.Fatalf("json patch: %v %v", err, d)
	}
	_, err = deployments.Patch(ctx, "web", types.JSONPatchType, []byte(`[{"op":"test","path":"/spec/replicas","value":2}]`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("failed test op: %v", err)
	}
	d, err = deployments.Patch(ctx, "web", types.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"registry.podline:5000/demo/web:2.0"},{"name":"side","image":"registry.podline:5000/demo/side:1.0"}]}}}}`),
		metav1.PatchOptions{FieldManager: "rollout"})
	if err != nil {
		t.Fatalf("strategic patch: %v", err)
	}
	if c := d.Spec.Template.Spec.Containers; len(c) != 2 || c[0].Image != "registry.podline:5000/demo/web:2.0" || c[1].Name != "side" {
		t.Fatalf("containers: %+v", c)
	}
	managers := map[string]bool{}
	for _, e := range d.ManagedFields {
		managers[e.Manager] = true
	}
	if !managers["rollout"] {
		t.Fatalf("fieldManager not recorded: %+v", d.ManagedFields)
	}
	dry, err := deployments.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":9}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil || *dry.Spec.Replicas != 9 {
		t.Fatalf("dry-run patch: %v", err)
	}
	if got, _ := deployments.Get(ctx, "web", metav1.GetOptions{}); *got.Spec.Replicas != 4 {
		t.Fatalf("dry-run patch was stored: %d", *got.Spec.Replicas)
	}
}

// Server-side apply through client-go's typed Apply: a second manager
// conflicts with Kubernetes' message until it forces.
func TestServerSideApplyThroughClientGo(t *testing.T) {
	ctx := ctxFor(t)
	_, cs := start(t)
	deployments := cs.AppsV1().Deployments(metav1.NamespaceDefault)
	config := func(replicas int32) *appsv1ac.DeploymentApplyConfiguration {
		return appsv1ac.Deployment("web", metav1.NamespaceDefault).WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(replicas).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{"app": "web"})).
			WithStrategy(appsv1ac.DeploymentStrategy().WithType(appsv1.RollingUpdateDeploymentStrategyType).
				WithRollingUpdate(appsv1ac.RollingUpdateDeployment().WithMaxSurge(intstr.FromInt32(1)).WithMaxUnavailable(intstr.FromInt32(0)))).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(map[string]string{"app": "web"}).
				WithSpec(corev1ac.PodSpec().WithContainers(corev1ac.Container().WithName("web").WithImage("registry.podline:5000/demo/web:1.0")))))
	}
	d, err := deployments.Apply(ctx, config(2), metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil || *d.Spec.Replicas != 2 {
		t.Fatalf("apply: %v", err)
	}
	if len(d.ManagedFields) != 1 || d.ManagedFields[0].Manager != "alice" || d.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("managedFields: %+v", d.ManagedFields)
	}
	_, err = deployments.Apply(ctx, config(5), metav1.ApplyOptions{FieldManager: "bob"})
	want := `Apply failed with 1 conflict: conflict with "alice" using apps/v1: .spec.replicas`
	if !apierrors.IsConflict(err) || err.Error() != want {
		t.Fatalf("conflicting apply: %v", err)
	}
	if st, ok := err.(apierrors.APIStatus); !ok || len(st.Status().Details.Causes) != 1 ||
		st.Status().Details.Causes[0].Type != metav1.CauseTypeFieldManagerConflict {
		t.Fatalf("causes: %+v", err)
	}
	d, err = deployments.Apply(ctx, config(5), metav1.ApplyOptions{FieldManager: "bob", Force: true})
	if err != nil || *d.Spec.Replicas != 5 {
		t.Fatalf("forced apply: %v", err)
	}
}

// The scale subresource through the typed client and through client-go's
// scale client, which finds autoscaling/v1 Scale in discovery as kubectl
// scale does.
func TestScaleThroughClientGo(t *testing.T) {
	ctx := ctxFor(t)
	s, cs := start(t)
	deployments := cs.AppsV1().Deployments(metav1.NamespaceDefault)
	if _, err := deployments.Create(ctx, rollingDeployment("web", 2), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sc, err := deployments.GetScale(ctx, "web", metav1.GetOptions{})
	if err != nil || sc.Spec.Replicas != 2 || sc.Status.Selector != "app=web" {
		t.Fatalf("get scale: %v %+v", err, sc)
	}
	sc.Spec.Replicas = 3
	if sc, err = deployments.UpdateScale(ctx, "web", sc, metav1.UpdateOptions{}); err != nil || sc.Spec.Replicas != 3 {
		t.Fatalf("update scale: %v", err)
	}
	stale := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: "1"}, Spec: autoscalingv1.ScaleSpec{Replicas: 1}}
	if _, err := deployments.UpdateScale(ctx, "web", stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("stale scale: %v", err)
	}

	dc, err := discovery.NewDiscoveryClientForConfig(config(s))
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	scaler, err := scale.NewForConfig(config(s), mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(dc))
	if err != nil {
		t.Fatal(err)
	}
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	cur, err := scaler.Scales(metav1.NamespaceDefault).Get(ctx, gr, "web", metav1.GetOptions{})
	if err != nil || cur.Spec.Replicas != 3 {
		t.Fatalf("scale client get: %v %+v", err, cur)
	}
	cur.Spec.Replicas = 6
	if _, err := scaler.Scales(metav1.NamespaceDefault).Update(ctx, gr, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("scale client update: %v", err)
	}
	if d, _ := deployments.Get(ctx, "web", metav1.GetOptions{}); *d.Spec.Replicas != 6 {
		t.Fatalf("replicas after scale: %d", *d.Spec.Replicas)
	}
}

// DeleteCollection with a label selector deletes the matching pods only.
func TestDeleteCollectionThroughClientGo(t *testing.T) {
	ctx := ctxFor(t)
	_, cs := start(t)
	pods := cs.CoreV1().Pods(metav1.NamespaceDefault)
	for _, p := range []struct{ name, app string }{{"a1", "a"}, {"a2", "a"}, {"b1", "b"}} {
		if _, err := pods.Create(ctx, makePod(p.name).label("app", p.app).obj(), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=a"}); err != nil {
		t.Fatalf("deletecollection: %v", err)
	}
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || !strings.HasPrefix(list.Items[0].Name, "b") {
		t.Fatalf("left: %v %v", err, list)
	}
}
