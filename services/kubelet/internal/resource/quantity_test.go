package resource

import (
	"errors"
	"testing"

	quantity "podline.dev/pkg/resource"
	corev1 "podline.dev/proto/core/v1"
)

func TestAmountReadsKubernetesQuantities(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int64
	}{
		{CPU, "100m", 100},
		{CPU, "2", 2000},
		{CPU, "0.5", 500},
		{CPU, "1.0005", 1001}, // rounded up
		{Memory, "128Mi", 128 << 20},
		{Memory, "1.5Gi", 1536 << 20},
		{Memory, "1G", 1_000_000_000},
		{Memory, "1e3", 1000},
		{Memory, "100m", 1}, // rounded up to a whole byte
		{Pods, "110", 110},
	} {
		got, err := Amount(tc.name, tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Amount(%s, %q) = %d, %v; want %d", tc.name, tc.in, got, err, tc.want)
		}
	}
}

func TestAmountRejectsWhatIsNotAQuantity(t *testing.T) {
	for _, in := range []string{"", "abc", "1x", "--1", "1Qi"} {
		if _, err := Amount(Memory, in); !errors.Is(err, ErrFormat) && !errors.Is(err, quantity.ErrSuffix) {
			t.Errorf("Amount(%q): %v, want ErrFormat", in, err)
		}
	}
}

func TestFormatRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   int64
		want string
	}{
		{CPU, 250, "250m"}, {CPU, 2000, "2"}, {Memory, 512 << 20, "512Mi"}, {Memory, 1000, "1000"}, {Pods, 110, "110"},
	} {
		if got := Format(tc.name, tc.in); got != tc.want {
			t.Errorf("Format(%s, %d) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestPodRequestsSumsContainersAndTakesTheLargestInit(t *testing.T) {
	pod := &corev1.Pod{Spec: &corev1.PodSpec{
		InitContainers: []*corev1.Container{
			{Resources: &corev1.ResourceRequirements{Requests: map[string]string{"cpu": "1500m"}}},
		},
		Containers: []*corev1.Container{
			{Resources: &corev1.ResourceRequirements{Requests: map[string]string{"cpu": "500m", "memory": "64Mi"}}},
			{Resources: &corev1.ResourceRequirements{Limits: map[string]string{"cpu": "250m", "memory": "64Mi"}}},
		},
	}}
	got := PodRequests(pod)
	if got[CPU] != 1500 || got[Memory] != 128<<20 {
		t.Fatalf("PodRequests = %v", got)
	}
}
