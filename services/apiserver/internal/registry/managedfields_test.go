package registry

import (
	"context"
	"testing"
	"time"

	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

func podRegistry(t testing.TB) *Registry {
	res, _ := apis.Lookup("", "pods")
	r, err := New(res, nil, WithClock(func() time.Time { return time.Unix(1_800_000_000, 0) }))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runningPod is a pod as the kubelet reports it: spec, and a status with
// conditions and container statuses.
func runningPod() *corev1.Pod {
	return &corev1.Pod{
		ApiVersion: "v1", Kind: "Pod",
		Metadata: &metav1.ObjectMeta{Name: "web-1", Namespace: "default", Labels: map[string]string{"app": "web", "pod-template-hash": "7c9d8f6b5"},
			OwnerReferences: []*metav1.OwnerReference{{ApiVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7c9d8f6b5", Uid: "u1"}}},
		Spec: &corev1.PodSpec{NodeName: "node-1", Containers: []*corev1.Container{
			{Name: "web", Image: "registry.podline:5000/demo/web:1.0", Ports: []*corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP"}},
				Env: []*corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}}},
			{Name: "side", Image: "registry.podline:5000/demo/side:1.0"}}},
		Status: &corev1.PodStatus{Phase: "Running", PodIp: "10.244.1.2", Conditions: []*corev1.PodCondition{
			{Type: "PodScheduled", Status: "True"}, {Type: "Initialized", Status: "True"}, {Type: "Ready", Status: "True"}},
			ContainerStatuses: []*corev1.ContainerStatus{{Name: "web", Ready: true, Image: "registry.podline:5000/demo/web:1.0"}}},
	}
}

func entries(md *metav1.ObjectMeta) map[string]string {
	out := map[string]string{}
	for _, e := range md.GetManagedFields() {
		out[e.GetManager()+"/"+e.GetOperation()+"/"+e.GetSubresource()] = e.GetFieldsV1()
	}
	return out
}

func TestRecordUpdateSeparatesStatusFromSpec(t *testing.T) {
	r := podRegistry(t)
	created := runningPod()
	created.Status = nil
	ctx := WithFieldManager(context.Background(), "kube-controller-manager")
	if err := r.recordUpdate(ctx, nil, created, ""); err != nil {
		t.Fatal(err)
	}
	got := entries(created.Metadata)
	if len(got) != 1 || got["kube-controller-manager/Update/"] == "" {
		t.Fatalf("create: %v", got)
	}

	withStatus := object.Copy(created)
	withStatus.Status = runningPod().Status
	if err := r.recordUpdate(WithFieldManager(context.Background(), "kubelet"), created, withStatus, "status"); err != nil {
		t.Fatal(err)
	}
	got = entries(withStatus.Metadata)
	want := `{"f:status":{"f:conditions":{"k:{\"type\":\"Initialized\"}":{".":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodScheduled\"}":{".":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:phase":{},"f:podIP":{}}}`
	if got["kubelet/Update/status"] != want {
		t.Fatalf("kubelet's status entry\n got %s\nwant %s", got["kubelet/Update/status"], want)
	}
	if len(got) != 2 {
		t.Fatalf("entries: %v", got)
	}
	// A write without a manager in its context (the apiserver's own) records nothing.
	again := object.Copy(withStatus)
	again.Metadata.Labels["x"] = "y"
	if err := r.recordUpdate(context.Background(), withStatus, again, ""); err != nil || len(entries(again.Metadata)) != 2 {
		t.Fatalf("anonymous write: %v %v", err, entries(again.Metadata))
	}
}

// BenchmarkRecordUpdatePodStatus is the managedFields cost the kubelet's
// status updates add to each write.
func BenchmarkRecordUpdatePodStatus(b *testing.B) {
	r := podRegistry(b)
	ctx := WithFieldManager(context.Background(), "kubelet")
	prev := runningPod()
	if err := r.recordUpdate(ctx, nil, prev, ""); err != nil {
		b.Fatal(err)
	}
	next := object.Copy(prev)
	next.Status.Conditions[2].Status = "False"
	b.ReportAllocs()
	for b.Loop() {
		n := object.Copy(next)
		if err := r.recordUpdate(ctx, prev, n, "status"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordCreatePod is the managedFields cost of creating a pod.
func BenchmarkRecordCreatePod(b *testing.B) {
	r := podRegistry(b)
	ctx := WithFieldManager(context.Background(), "kube-controller-manager")
	p := runningPod()
	p.Status = nil
	b.ReportAllocs()
	for b.Loop() {
		n := object.Copy(p)
		if err := r.recordUpdate(ctx, nil, n, ""); err != nil {
			b.Fatal(err)
		}
	}
}
