package status

import (
	"testing"
	"time"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/probes"
	"podline.dev/services/kubelet/internal/runtime"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// builders ------------------------------------------------------------------

type podB struct{ p *corev1.Pod }

func pod() *podB {
	return &podB{&corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "web", Namespace: "default", Uid: "u"}, Spec: &corev1.PodSpec{}}}
}

func (b *podB) init(names ...string) *podB {
	for _, n := range names {
		b.p.Spec.InitContainers = append(b.p.Spec.InitContainers, &corev1.Container{Name: n, Image: "img"})
	}
	return b
}

func (b *podB) app(names ...string) *podB {
	for _, n := range names {
		b.p.Spec.Containers = append(b.p.Spec.Containers, &corev1.Container{Name: n, Image: "img"})
	}
	return b
}

func (b *podB) readinessProbe() *podB {
	b.p.Spec.Containers[len(b.p.Spec.Containers)-1].ReadinessProbe = &corev1.Probe{}
	return b
}

func (b *podB) policy(p string) *podB { b.p.Spec.RestartPolicy = p; return b }

func (b *podB) old(st *corev1.PodStatus) *podB { b.p.Status = st; return b }

func (b *podB) obj() *corev1.Pod { return b.p }

func sandbox(ips ...string) *runtime.Sandbox {
	return &runtime.Sandbox{ID: "sb", State: runtime.SandboxReady, IPs: ips, CreatedAt: now}
}

func running(name string, attempt int) *runtime.Container {
	return &runtime.Container{ID: name + "-" + string(rune('0'+attempt)), Name: name, Attempt: attempt, State: runtime.ContainerRunning,
		StartedAt: now.Add(-time.Minute), CreatedAt: now.Add(time.Duration(attempt) * time.Second), ImageID: "img@sha256:1"}
}

func exited(name string, attempt, code int) *runtime.Container {
	c := running(name, attempt)
	c.State, c.ExitCode, c.FinishedAt = runtime.ContainerExited, code, now.Add(-time.Second)
	return c
}

type fakeProbes map[string]probes.Result

func (f fakeProbes) Result(kind probes.Kind, id string) (probes.Result, bool) {
	r, ok := f[kind.String()+"/"+id]
	return r, ok
}

func conds(st *corev1.PodStatus) map[string]string {
	out := map[string]string{}
	for _, c := range st.GetConditions() {
		out[c.GetType()] = c.GetStatus()
	}
	return out
}

// tests ---------------------------------------------------------------------

func TestComputePhasesAndConditions(t *testing.T) {
	for _, tc := range []struct {
		name       string
		pod        *corev1.Pod
		sandboxes  []*runtime.Sandbox
		containers []*runtime.Container
		waiting    map[string]Waiting
		probes     fakeProbes
		terminal   bool
		phase      string
		conds      map[string]string
	}{
		{
			name: "nothing created yet is Pending, waiting in ContainerCreating",
			pod:  pod().app("web").obj(), phase: "Pending",
			conds: map[string]string{PodScheduled: "True", PodReadyToStartContainers: "False", Initialized: "True", ContainersReady: "False", Ready: "False"},
		},
		{
			name: "a running init container keeps the pod Pending and uninitialized",
			pod:  pod().init("init").app("web").obj(), sandboxes: []*runtime.Sandbox{sandbox("10.0.0.2")},
			containers: []*runtime.Container{running("init", 0)}, phase: "Pending",
			conds: map[string]string{PodReadyToStartContainers: "True", Initialized: "False", Ready: "False"},
		},
		{
			name: "a running container without probes is Running and Ready",
			pod:  pod().init("init").app("web").obj(), sandboxes: []*runtime.Sandbox{sandbox("10.0.0.2")},
			containers: []*runtime.Container{exited("init", 0, 0), running("web", 0)}, phase: "Running",
			conds: map[string]string{Initialized: "True", ContainersReady: "True", Ready: "True"},
		},
		{
			name: "a readiness probe not passed yet keeps it unready",
			pod:  pod().app("web").readinessProbe().obj(), sandboxes: []*runtime.Sandbox{sandbox("10.0.0.2")},
			containers: []*runtime.Container{running("web", 0)}, probes: fakeProbes{"Readiness/web-0": probes.Failure},
			phase: "Running", conds: map[string]string{ContainersReady: "False", Ready: "False"},
		},
		{
			name: "a passed readiness probe makes it Ready",
			pod:  pod().app("web").readinessProbe().obj(), sandboxes: []*runtime.Sandbox{sandbox("10.0.0.2")},
			containers: []*runtime.Container{running("web", 0)}, probes: fakeProbes{"Readiness/web-0": probes.Success},
			phase: "Running", conds: map[string]string{ContainersReady: "True", Ready: "True"},
		},
		{
			name: "a failed init container with restartPolicy Never fails the pod",
			pod:  pod().init("init").app("web").policy("Never").obj(), sandboxes: []*runtime.Sandbox{sandbox("10.0.0.2")},
			containers: []*runtime.Container{exited("init", 0, 1)}, phase: "Failed",
		},
		{
			name: "all containers done with success under OnFailure is Succeeded",
			pod:  pod().app("job").policy("OnFailure").obj(), sandboxes: []*runtime.Sandbox{sandbox("10.0.0.2")},
			containers: []*runtime.Container{exited("job", 0, 0)}, phase: "Succeeded",
			conds: map[string]string{Ready: "False", ContainersReady: "False"},
		},
		{
			name: "a failure under Never is Failed",
			pod:  pod().app("job").policy("Never").obj(), sandboxes: []*runtime.Sandbox{sandbox("10.0.0.2")},
			containers: []*runtime.Container{exited("job", 0, 3)}, phase: "Failed",
		},
		{
			name: "an exited container under Always is still Running (it will restart)",
			pod:  pod().app("web").obj(), sandboxes: []*runtime.Sandbox{sandbox("10.0.0.2")},
			containers: []*runtime.Container{exited("web", 0, 1)}, phase: "Running",
		},
		{
			name: "a pod the kubelet stopped for good is Failed even under Always",
			pod:  pod().app("web").obj(), sandboxes: []*runtime.Sandbox{sandbox("10.0.0.2")},
			containers: []*runtime.Container{exited("web", 0, 143)}, terminal: true, phase: "Failed",
			conds: map[string]string{PodReadyToStartContainers: "False"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := Compute(Input{Pod: tc.pod, Sandboxes: tc.sandboxes, Containers: tc.containers, Waiting: tc.waiting,
				Probes: tc.probes, HostIPs: []string{"172.18.0.3"}, Now: now, Terminal: tc.terminal})
			if st.GetPhase() != tc.phase {
				t.Fatalf("phase %s, want %s", st.GetPhase(), tc.phase)
			}
			got := conds(st)
			for k, v := range tc.conds {
				if got[k] != v {
					t.Fatalf("condition %s=%s, want %s (all %v)", k, got[k], v, got)
				}
			}
		})
	}
}

func TestComputeContainerStatuses(t *testing.T) {
	p := pod().app("web").obj()
	st := Compute(Input{
		Pod: p, Sandboxes: []*runtime.Sandbox{sandbox("10.0.0.2")},
		Containers: []*runtime.Container{exited("web", 0, 1), exited("web", 1, 2)},
		Waiting:    map[string]Waiting{"web": {Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container=web"}},
		HostIPs:    []string{"172.18.0.3"}, Now: now,
	})
	cs := st.GetContainerStatuses()[0]
	if cs.GetState().GetWaiting().GetReason() != "CrashLoopBackOff" || cs.GetRestartCount() != 1 ||
		cs.GetLastState().GetTerminated().GetExitCode() != 2 || cs.GetContainerId() != "containerd://web-1" || cs.GetReady() {
		t.Fatalf("crash-looping container status %v", cs)
	}
	if st.GetPodIp() != "10.0.0.2" || len(st.GetPodIps()) != 1 || st.GetHostIp() != "172.18.0.3" || st.GetStartTime().GetSeconds() != now.Unix() {
		t.Fatalf("ips/start %v", st)
	}

	st = Compute(Input{Pod: p, Containers: []*runtime.Container{running("web", 2), exited("web", 1, 137)}, Now: now})
	cs = st.GetContainerStatuses()[0]
	if cs.GetState().GetRunning().GetStartedAt().GetSeconds() != now.Add(-time.Minute).Unix() || cs.GetRestartCount() != 2 ||
		cs.GetLastState().GetTerminated().GetExitCode() != 137 || !cs.GetStarted() || cs.GetImageId() != "img@sha256:1" {
		t.Fatalf("restarted container status %v", cs)
	}
}

func TestComputeKeepsTransitionTimesAndForeignConditions(t *testing.T) {
	earlier := &metav1.Time{Seconds: now.Add(-time.Hour).Unix()}
	p := pod().app("web").old(&corev1.PodStatus{
		StartTime: earlier,
		Conditions: []*corev1.PodCondition{
			{Type: Ready, Status: "True", LastTransitionTime: earlier},
			{Type: PodScheduled, Status: "True", LastTransitionTime: earlier},
			{Type: "example.com/Gate", Status: "True", LastTransitionTime: earlier},
		},
	}).obj()
	in := Input{Pod: p, Sandboxes: []*runtime.Sandbox{sandbox("10.0.0.2")}, Containers: []*runtime.Container{running("web", 0)}, Now: now}
	st := Compute(in)
	for _, c := range st.GetConditions() {
		switch c.GetType() {
		case Ready, PodScheduled, "example.com/Gate":
			if c.GetLastTransitionTime().GetSeconds() != earlier.GetSeconds() {
				t.Fatalf("%s moved its transition time", c.GetType())
			}
		case PodReadyToStartContainers:
			if c.GetLastTransitionTime().GetSeconds() != now.Unix() {
				t.Fatalf("new condition %s has transition time %v", c.GetType(), c.GetLastTransitionTime())
			}
		}
	}
	if st.GetStartTime().GetSeconds() != earlier.GetSeconds() {
		t.Fatal("start time moved")
	}
	if conds(st)["example.com/Gate"] != "True" {
		t.Fatal("a condition the kubelet does not own was dropped")
	}
	// Computing again from the result gives the same status: nothing to write.
	in.Pod.Status = st
	in.Now = now.Add(time.Minute)
	if again := Compute(in); !equal(again, st) {
		t.Fatalf("status not stable:\n%v\n%v", again, st)
	}
}

func TestQOSClass(t *testing.T) {
	req := func(cpu, mem string) *corev1.ResourceRequirements {
		return &corev1.ResourceRequirements{Requests: map[string]string{"cpu": cpu, "memory": mem}, Limits: map[string]string{"cpu": cpu, "memory": mem}}
	}
	be := pod().app("a").obj()
	g := pod().app("a").obj()
	g.Spec.Containers[0].Resources = req("1", "1Gi")
	b := pod().app("a").obj()
	b.Spec.Containers[0].Resources = &corev1.ResourceRequirements{Requests: map[string]string{"cpu": "100m"}}
	for p, want := range map[*corev1.Pod]string{be: "BestEffort", g: "Guaranteed", b: "Burstable"} {
		if got := QOSClass(p); got != want {
			t.Errorf("QOSClass = %s, want %s", got, want)
		}
	}
}
