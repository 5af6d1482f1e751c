package nodestatus

import (
	"testing"
	"time"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/resource"
	"podline.dev/services/kubelet/internal/runtime"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func input() Input {
	return Input{
		Capacity:  resource.List{resource.CPU: 2000, resource.Memory: 4 << 30, resource.Pods: 110},
		Reserved:  resource.List{resource.CPU: 100, resource.Memory: 256 << 20},
		Addresses: []*corev1.NodeAddress{{Type: "InternalIP", Address: "172.18.0.3"}},
		Images: []*runtime.Image{
			{ID: "sha256:a", RepoTags: []string{"small:1"}, RepoDigests: []string{"small@sha256:a"}, Size: 10},
			{ID: "sha256:b", RepoTags: []string{"big:1"}, Size: 1000},
		},
		KubeletPort: 10250,
		Now:         t0,
	}
}

func condition(st *corev1.NodeStatus, typ string) *corev1.NodeCondition {
	for _, c := range st.GetConditions() {
		if c.GetType() == typ {
			return c
		}
	}
	return nil
}

func TestBuildStatus(t *testing.T) {
	st := BuildStatus(nil, input())
	if st.GetCapacity()["cpu"] != "2" || st.GetAllocatable()["cpu"] != "1900m" || st.GetAllocatable()["memory"] != "3840Mi" {
		t.Fatalf("capacity %v allocatable %v", st.GetCapacity(), st.GetAllocatable())
	}
	for typ, want := range map[string]string{"Ready": "True", "MemoryPressure": "False", "DiskPressure": "False", "PIDPressure": "False"} {
		if c := condition(st, typ); c.GetStatus() != want || c.GetReason() == "" {
			t.Fatalf("%s: %v", typ, c)
		}
	}
	if imgs := st.GetImages(); len(imgs) != 2 || imgs[0].GetNames()[0] != "big:1" || imgs[1].GetNames()[0] != "small@sha256:a" {
		t.Fatalf("images (largest first, digests before tags) %v", imgs)
	}
	if st.GetDaemonEndpoints().GetKubeletEndpoint().GetPort() != 10250 {
		t.Fatal("kubelet endpoint")
	}
}

func TestConditionsKeepTransitionTimesAndHeartbeatsDoNotCountAsChange(t *testing.T) {
	first := BuildStatus(nil, input())
	in := input()
	in.Now = t0.Add(time.Minute)
	second := BuildStatus(first, in)
	if condition(second, "Ready").GetLastTransitionTime().GetSeconds() != t0.Unix() ||
		condition(second, "Ready").GetLastHeartbeatTime().GetSeconds() != in.Now.Unix() {
		t.Fatal("transition moved or heartbeat did not")
	}
	if Changed(first, second) {
		t.Fatal("a heartbeat alone counted as a change")
	}
	in.NotReady = "container runtime network not ready"
	third := BuildStatus(second, in)
	if !Changed(second, third) || condition(third, "Ready").GetStatus() != "False" || condition(third, "Ready").GetMessage() != in.NotReady {
		t.Fatalf("not ready: %v", condition(third, "Ready"))
	}
}

func TestPressureThresholds(t *testing.T) {
	s := Signals{MemoryAvailable: 50 << 20, FsAvailable: 5, FsCapacity: 100, PIDsUsed: 95, PIDsMax: 100}
	if m, d, p := s.Pressure(); !m || !d || !p {
		t.Fatalf("pressure %v %v %v", m, d, p)
	}
	s = Signals{MemoryAvailable: 1 << 30, FsAvailable: 50, FsCapacity: 100, PIDsUsed: 10, PIDsMax: 100}
	if m, d, p := s.Pressure(); m || d || p {
		t.Fatalf("pressure %v %v %v", m, d, p)
	}
}

func TestParseTaints(t *testing.T) {
	got, err := ParseTaints("node-role.kubernetes.io/control-plane:NoSchedule,dedicated=gpu:NoExecute")
	if err != nil || len(got) != 2 || got[0].GetKey() != "node-role.kubernetes.io/control-plane" || got[0].GetEffect() != "NoSchedule" ||
		got[1].GetValue() != "gpu" || got[1].GetEffect() != "NoExecute" {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"nokey", "a=b:Sometimes", ":NoSchedule"} {
		if _, err := ParseTaints(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestDetectCapacityReadsTheMachine(t *testing.T) {
	c := DetectCapacity(t.TempDir())
	if c[resource.CPU] < 1000 || c[resource.Memory] <= 0 || c[resource.Pods] != DefaultMaxPods || c[resource.EphemeralStorage] <= 0 {
		t.Fatalf("%v", c)
	}
}
