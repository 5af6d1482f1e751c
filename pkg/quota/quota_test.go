package quota

import (
	"maps"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func pod(name, phase string, requests, limits map[string]string) *corev1.Pod {
	return &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: name, Namespace: "team"},
		Spec: &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: "w",
			Resources: &corev1.ResourceRequirements{Requests: requests, Limits: limits}}}},
		Status: &corev1.PodStatus{Phase: phase}}
}

func TestPodUsageAnswersToEveryAlias(t *testing.T) {
	p := pod("a", "Running", map[string]string{"cpu": "250m", "memory": "64Mi"}, map[string]string{"cpu": "1"})
	p.Spec.Containers = append(p.Spec.Containers, &corev1.Container{Name: "side",
		Resources: &corev1.ResourceRequirements{Requests: map[string]string{"cpu": "250m"}}})
	// A big init container sets the pod's effective memory request.
	p.Spec.InitContainers = []*corev1.Container{{Name: "init",
		Resources: &corev1.ResourceRequirements{Requests: map[string]string{"memory": "1Gi"}}}}
	got := PodUsage(p).Strings()
	want := map[string]string{"pods": "1", "count/pods": "1", "cpu": "500m", "requests.cpu": "500m",
		"memory": "1Gi", "requests.memory": "1Gi", "limits.cpu": "1", "limits.memory": "0"}
	if !maps.Equal(got, want) {
		t.Errorf("usage = %v\nwant    %v", got, want)
	}
}

func TestPodCounts(t *testing.T) {
	deleting := func(ago time.Duration, grace int64) *corev1.Pod {
		p := pod("d", "Running", nil, nil)
		p.Metadata.DeletionTimestamp = &metav1.Time{Seconds: now.Add(-ago).Unix()}
		p.Metadata.DeletionGracePeriodSeconds = proto.Int64(grace)
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"pending", pod("p", "Pending", nil, nil), true},
		{"running", pod("r", "Running", nil, nil), true},
		{"succeeded", pod("s", "Succeeded", nil, nil), false},
		{"failed", pod("f", "Failed", nil, nil), false},
		{"terminating within its grace", deleting(10*time.Second, 30), true},
		{"stuck terminating past its grace", deleting(31*time.Second, 30), false},
	} {
		if got := PodCounts(tc.pod, now); got != tc.want {
			t.Errorf("%s: counts = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPodsUsageSkipsFinishedPods(t *testing.T) {
	pods := []*corev1.Pod{
		pod("a", "Running", map[string]string{"cpu": "500m"}, nil),
		pod("b", "Pending", map[string]string{"cpu": "250m"}, nil),
		pod("done", "Succeeded", map[string]string{"cpu": "4"}, nil),
	}
	u := PodsUsage(pods, now)
	if u[Pods] != 2000 || u[RequestsCPU] != 750 || u[CPU] != 750 || u[LimitsMemory] != 0 {
		t.Errorf("usage = %v", u)
	}
	if _, ok := PodsUsage(nil, now)[LimitsCPU]; !ok {
		t.Error("an empty namespace must report zero, not nothing")
	}
}

func TestCountedResource(t *testing.T) {
	for _, tc := range []struct {
		name, group, res string
		ok               bool
	}{
		{"count/configmaps", "", "configmaps", true},
		{"configmaps", "", "configmaps", true},
		{"services", "", "services", true},
		{"count/deployments.apps", "apps", "deployments", true},
		{"count/pods", "", "", false},
		{"pods", "", "", false},
		{"requests.cpu", "", "", false},
	} {
		g, r, ok := CountedResource(tc.name)
		if g != tc.group || r != tc.res || ok != tc.ok {
			t.Errorf("%s: got %q %q %v", tc.name, g, r, ok)
		}
	}
	if got := CountNames("", "secrets"); !slices.Equal(got, []string{"count/secrets", "secrets"}) {
		t.Errorf("core names = %v", got)
	}
	if got := CountNames("apps", "replicasets"); !slices.Equal(got, []string{"count/replicasets.apps"}) {
		t.Errorf("apps names = %v", got)
	}
}

func TestMissing(t *testing.T) {
	p := pod("a", "", map[string]string{"cpu": "1"}, nil)
	p.Spec.InitContainers = []*corev1.Container{{Name: "init"}}
	if got := Missing(p, "cpu"); !slices.Equal(got, []string{"init"}) {
		t.Errorf("cpu missing in %v", got)
	}
	if got := Missing(p, LimitsMemory); !slices.Equal(got, []string{"init", "web"}) {
		t.Errorf("limits.memory missing in %v", got)
	}
	if got := Missing(p, Pods); got != nil {
		t.Errorf("pods is not a compute resource: %v", got)
	}
}

func TestFormatAndParseRoundTrip(t *testing.T) {
	list := map[string]string{"pods": "3", "requests.cpu": "1500m", "cpu": "2", "limits.memory": "512Mi", "memory": "1Gi", "count/secrets": "0"}
	if got := Parse(list).Strings(); !maps.Equal(got, list) {
		t.Errorf("round trip = %v", got)
	}
	if !Equal(map[string]string{"cpu": "1"}, map[string]string{"cpu": "1000m"}) {
		t.Error("1 and 1000m are the same amount")
	}
	if Equal(map[string]string{"cpu": "1"}, map[string]string{"cpu": "1", "pods": "0"}) {
		t.Error("lists with different names are not equal")
	}
}
