package kuberuntime

import (
	"slices"
	"testing"
	"time"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/probes"
	"podline.dev/services/kubelet/internal/runtime"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type podB struct{ p *corev1.Pod }

func makePod() *podB {
	return &podB{&corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "web", Namespace: "default", Uid: "u1"}, Spec: &corev1.PodSpec{}}}
}

func (b *podB) init(names ...string) *podB {
	for _, n := range names {
		b.p.Spec.InitContainers = append(b.p.Spec.InitContainers, &corev1.Container{Name: n, Image: "img:1"})
	}
	return b
}

func (b *podB) app(names ...string) *podB {
	for _, n := range names {
		b.p.Spec.Containers = append(b.p.Spec.Containers, &corev1.Container{Name: n, Image: "img:1"})
	}
	return b
}

func (b *podB) policy(p string) *podB { b.p.Spec.RestartPolicy = p; return b }

func (b *podB) liveness() *podB {
	b.p.Spec.Containers[len(b.p.Spec.Containers)-1].LivenessProbe = &corev1.Probe{}
	return b
}

func (b *podB) obj() *corev1.Pod { return b.p }

// status builds a runtime PodStatus: sb() a ready sandbox with an IP,
// then containers.
type statusB struct {
	sbs []*runtime.Sandbox
	cs  []*runtime.Container
	n   int
}

func st() *statusB { return &statusB{} }

func (s *statusB) sandbox(state runtime.SandboxState, ips ...string) *statusB {
	s.sbs = append(s.sbs, &runtime.Sandbox{ID: "sb" + string(rune('0'+len(s.sbs))), State: state, IPs: ips, Attempt: len(s.sbs), CreatedAt: t0.Add(time.Duration(len(s.sbs)) * time.Second)})
	return s
}

func (s *statusB) c(pod *corev1.Pod, name string, state runtime.ContainerState, code int) *statusB {
	s.n++
	c := &runtime.Container{ID: name + string(rune('0'+s.n)), Name: name, State: state, ExitCode: code, CreatedAt: t0.Add(time.Duration(s.n) * time.Second)}
	for _, sc := range append(pod.Spec.Containers, pod.Spec.InitContainers...) {
		if sc.Name == name {
			c.Hash = ContainerHash(sc)
		}
	}
	for _, old := range s.cs {
		if old.Name == name {
			c.Attempt = old.Attempt + 1
		}
	}
	s.cs = append(s.cs, c)
	return s
}

func (s *statusB) obj() *PodStatus { return NewPodStatus("u1", s.sbs, s.cs) }

type results map[string]probes.Result

func (r results) Result(kind probes.Kind, id string) (probes.Result, bool) {
	v, ok := r[kind.String()+"/"+id]
	return v, ok
}

func TestComputePodActions(t *testing.T) {
	withInit := makePod().init("init").app("web").obj()
	plain := makePod().app("web", "side").obj()
	never := makePod().app("job").policy("Never").obj()
	onFailure := makePod().app("a", "b").policy("OnFailure").obj()
	live := makePod().app("web").liveness().obj()
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		status  *PodStatus
		results results
		check   func(t *testing.T, a Actions)
	}{
		{"a new pod gets a sandbox and its first init container", withInit, st().obj(), nil, func(t *testing.T, a Actions) {
			if !a.CreateSandbox || a.NextInit.GetName() != "init" || len(a.Start) != 0 {
				t.Fatalf("%+v", a)
			}
		}},
		{"a new pod without init containers starts all its containers", plain, st().obj(), nil, func(t *testing.T, a Actions) {
			if !a.CreateSandbox || a.NextInit != nil || !slices.Equal(a.Start, []int{0, 1}) {
				t.Fatalf("%+v", a)
			}
		}},
		{"a running init container is waited for", withInit, st().sandbox(runtime.SandboxReady, "10.0.0.2").c(withInit, "init", runtime.ContainerRunning, 0).obj(), nil,
			func(t *testing.T, a Actions) {
				if !a.Empty() {
					t.Fatalf("%+v", a)
				}
			}},
		{"a finished init container lets the app containers start", withInit,
			st().sandbox(runtime.SandboxReady, "10.0.0.2").c(withInit, "init", runtime.ContainerExited, 0).obj(), nil,
			func(t *testing.T, a Actions) {
				if a.CreateSandbox || a.NextInit != nil || !slices.Equal(a.Start, []int{0}) {
					t.Fatalf("%+v", a)
				}
			}},
		{"a failed init container is run again under Always", withInit,
			st().sandbox(runtime.SandboxReady, "10.0.0.2").c(withInit, "init", runtime.ContainerExited, 1).obj(), nil,
			func(t *testing.T, a Actions) {
				if a.NextInit.GetName() != "init" || a.KillPod {
					t.Fatalf("%+v", a)
				}
			}},
		{"a sandbox without an IP is replaced, killing the pod", plain,
			st().sandbox(runtime.SandboxReady).obj(), nil, func(t *testing.T, a Actions) {
				if !a.KillPod || !a.CreateSandbox || a.Attempt != 1 {
					t.Fatalf("%+v", a)
				}
			}},
		{"a dead sandbox of a Never pod that ran is not replaced", never,
			st().sandbox(runtime.SandboxNotReady, "10.0.0.2").c(never, "job", runtime.ContainerExited, 0).obj(), nil,
			func(t *testing.T, a Actions) {
				if !a.KillPod || a.CreateSandbox {
					t.Fatalf("%+v", a)
				}
			}},
		{"an exited container restarts under Always", plain,
			st().sandbox(runtime.SandboxReady, "10.0.0.2").c(plain, "web", runtime.ContainerExited, 0).c(plain, "side", runtime.ContainerRunning, 0).obj(), nil,
			func(t *testing.T, a Actions) {
				if !slices.Equal(a.Start, []int{0}) || a.KillPod {
					t.Fatalf("%+v", a)
				}
			}},
		{"OnFailure restarts only what failed", onFailure,
			st().sandbox(runtime.SandboxReady, "10.0.0.2").c(onFailure, "a", runtime.ContainerExited, 0).c(onFailure, "b", runtime.ContainerExited, 1).obj(), nil,
			func(t *testing.T, a Actions) {
				if !slices.Equal(a.Start, []int{1}) {
					t.Fatalf("%+v", a)
				}
			}},
		{"a Never pod whose containers all ended is killed", never,
			st().sandbox(runtime.SandboxReady, "10.0.0.2").c(never, "job", runtime.ContainerExited, 0).obj(), nil,
			func(t *testing.T, a Actions) {
				if !a.KillPod || a.CreateSandbox || len(a.Start) != 0 {
					t.Fatalf("%+v", a)
				}
			}},
		{"a failed liveness probe kills and restarts the container", live,
			st().sandbox(runtime.SandboxReady, "10.0.0.2").c(live, "web", runtime.ContainerRunning, 0).obj(), results{"Liveness/web1": probes.Failure},
			func(t *testing.T, a Actions) {
				k, ok := a.Kill["web1"]
				if !ok || !slices.Equal(a.Start, []int{0}) || k.Message != "Container web failed liveness probe, will be restarted" {
					t.Fatalf("%+v", a)
				}
			}},
		{"a changed container spec restarts it", plain,
			func() *PodStatus {
				s := st().sandbox(runtime.SandboxReady, "10.0.0.2").c(plain, "web", runtime.ContainerRunning, 0).c(plain, "side", runtime.ContainerRunning, 0)
				s.cs[0].Hash = "old"
				return s.obj()
			}(), nil,
			func(t *testing.T, a Actions) {
				if len(a.Kill) != 1 || !slices.Equal(a.Start, []int{0}) {
					t.Fatalf("%+v", a)
				}
			}},
		{"a healthy pod needs nothing", plain,
			st().sandbox(runtime.SandboxReady, "10.0.0.2").c(plain, "web", runtime.ContainerRunning, 0).c(plain, "side", runtime.ContainerRunning, 0).obj(), nil,
			func(t *testing.T, a Actions) {
				if !a.Empty() {
					t.Fatalf("%+v", a)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r ProbeResults
			if tc.results != nil {
				r = tc.results
			}
			tc.check(t, ComputePodActions(tc.pod, tc.status, r))
		})
	}
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "B": "two"}
	m := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	for in, want := range map[string]string{
		"$(A)-$(B)": "1-two", "$(C)": "$(C)", "$$(A)": "$(A)", "x$": "x$", "$(A": "$(A", "no vars": "no vars",
	} {
		if got := Expand(in, m); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPullPolicyDefaults(t *testing.T) {
	for image, want := range map[string]string{
		"nginx": "Always", "nginx:latest": "Always", "nginx:1.27": "IfNotPresent",
		"registry.podline:5000/demo/web:1.0":                                            "IfNotPresent",
		"nginx@sha256:0123456789012345678901234567890123456789012345678901234567890123": "IfNotPresent",
	} {
		if got := PullPolicy(&corev1.Container{Image: image}); got != want {
			t.Errorf("PullPolicy(%s) = %s, want %s", image, got, want)
		}
	}
}

func TestResourcesBecomeCgroupSettings(t *testing.T) {
	c := &corev1.Container{Resources: &corev1.ResourceRequirements{
		Requests: map[string]string{"cpu": "250m"}, Limits: map[string]string{"cpu": "500m", "memory": "64Mi"},
	}}
	r := Resources(c)
	if r.CPUShares != 256 || r.CPUQuota != 50000 || r.CPUPeriod != 100000 || r.MemoryLimit != 64<<20 {
		t.Fatalf("%+v", r)
	}
	if r := Resources(&corev1.Container{}); r.CPUShares != 2 || r.CPUQuota != 0 || r.MemoryLimit != 0 {
		t.Fatalf("best effort %+v", r)
	}
}
