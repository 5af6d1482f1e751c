package resourcequota

import (
	"context"
	"testing"

	"podline.dev/pkg/apierrors"
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/admission"
)

func pod(name, cpu, mem, phase string) *corev1.Pod {
	return &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: name, Namespace: "team"},
		Spec: &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: "w",
			Resources: &corev1.ResourceRequirements{Requests: map[string]string{"cpu": cpu, "memory": mem}}}}},
		Status: &corev1.PodStatus{Phase: phase}}
}

func quota(hard map[string]string) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{Metadata: &metav1.ObjectMeta{Name: "compute", Namespace: "team"}, Spec: &corev1.ResourceQuotaSpec{Hard: hard}}
}

func TestResourceQuota(t *testing.T) {
	pods, _ := apis.Lookup("", "pods")
	existing := admission.NewMemory("", "pods",
		pod("a", "500m", "256Mi", "Running"), pod("b", "250m", "256Mi", "Pending"), pod("done", "4", "4Gi", "Succeeded"))
	for _, tc := range []struct {
		name   string
		quotas []*corev1.ResourceQuota
		pod    *corev1.Pod
		want   string
	}{
		{name: "no quota", pod: pod("c", "8", "8Gi", "")},
		{name: "fits", quotas: []*corev1.ResourceQuota{quota(map[string]string{"pods": "3", "requests.cpu": "1", "requests.memory": "1Gi"})}, pod: pod("c", "250m", "512Mi", "")},
		{name: "pod count", quotas: []*corev1.ResourceQuota{quota(map[string]string{"pods": "2"})}, pod: pod("c", "1m", "1Mi", ""),
			want: `pods "c" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2`},
		{name: "cpu and memory", quotas: []*corev1.ResourceQuota{quota(map[string]string{"cpu": "1", "requests.memory": "1Gi", "pods": "10"})}, pod: pod("c", "500m", "1Gi", ""),
			want: `pods "c" is forbidden: exceeded quota: compute, requested: requests.cpu=500m,requests.memory=1Gi, used: requests.cpu=750m,requests.memory=512Mi, limited: requests.cpu=1,requests.memory=1Gi`},
		{name: "limit not set", quotas: []*corev1.ResourceQuota{quota(map[string]string{"limits.cpu": "2", "limits.memory": "2Gi"})}, pod: pod("c", "1m", "1Mi", ""),
			want: `pods "c" is forbidden: failed quota: compute: must specify limits.cpu for: web; limits.memory for: web`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			qs := admission.NewMemory("", "resourcequotas")
			for _, q := range tc.quotas {
				qs.Put(q)
			}
			a := &admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "team", Name: tc.pod.Metadata.Name, Object: tc.pod}
			err := New(qs, existing).Validate(context.Background(), a)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !apierrors.IsForbidden(err) || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
}
