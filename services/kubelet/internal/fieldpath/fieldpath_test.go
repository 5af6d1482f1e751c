package fieldpath

import (
	"testing"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/resource"
)

func TestFieldValueReadsTheDownwardAPIPaths(t *testing.T) {
	pod := &corev1.Pod{
		Metadata: &metav1.ObjectMeta{Name: "web", Namespace: "default", Uid: "u1", Labels: map[string]string{"app": "web", "tier": "front"}},
		Spec:     &corev1.PodSpec{NodeName: "worker-1", ServiceAccountName: "sa"},
	}
	env := Env{PodIPs: []string{"10.244.1.5"}, HostIPs: []string{"172.18.0.3"}}
	for path, want := range map[string]string{
		"metadata.name":           "web",
		"metadata.namespace":      "default",
		"metadata.uid":            "u1",
		"metadata.labels['app']":  "web",
		"metadata.labels":         "app=\"web\"\ntier=\"front\"",
		"spec.nodeName":           "worker-1",
		"spec.serviceAccountName": "sa",
		"status.podIP":            "10.244.1.5",
		"status.hostIP":           "172.18.0.3",
	} {
		got, err := FieldValue(pod, path, env)
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := FieldValue(pod, "spec.nope", env); err == nil {
		t.Error("unknown path resolved")
	}
}

func TestResourceValueDividesAndFallsBackToAllocatable(t *testing.T) {
	c := &corev1.Container{Resources: &corev1.ResourceRequirements{Limits: map[string]string{"memory": "128Mi"}, Requests: map[string]string{"cpu": "250m"}}}
	env := Env{NodeAllocatable: resource.List{resource.CPU: 2000}}
	for _, tc := range []struct{ res, div, want string }{
		{"limits.memory", "1Mi", "128"},
		{"requests.cpu", "1m", "250"},
		{"requests.cpu", "", "1"},
		{"limits.cpu", "", "2"},
	} {
		got, err := ResourceValue(c, tc.res, tc.div, env)
		if err != nil || got != tc.want {
			t.Errorf("%s/%s = %q, %v; want %q", tc.res, tc.div, got, err, tc.want)
		}
	}
}
