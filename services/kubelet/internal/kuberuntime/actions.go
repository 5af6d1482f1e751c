package kuberuntime

import (
	"fmt"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/probes"
	"podline.dev/services/kubelet/internal/runtime"
	"podline.dev/services/kubelet/internal/status"
)

// ProbeResults answers what a container instance's probes last said.
type ProbeResults = status.ProbeResults

// KillInfo says why a container is killed.
type KillInfo struct {
	Name      string
	Container *runtime.Container
	// Message is the Killing event's message.
	Message string
	// Probe is the probe that failed, if one did (its grace period applies).
	Probe *corev1.Probe
}

// Actions are what a sync does to a pod.
type Actions struct {
	// KillPod stops every container and the sandbox.
	KillPod bool
	// CreateSandbox makes a new sandbox (after KillPod, when one existed).
	CreateSandbox bool
	// SandboxID is the sandbox containers start in, when not creating one.
	SandboxID string
	// Attempt is the new sandbox's attempt.
	Attempt int
	// NextInit is the init container to start now.
	NextInit *corev1.Container
	// Start lists app containers to start, by index in spec.containers.
	Start []int
	// Kill lists running containers to stop, by container ID.
	Kill map[string]KillInfo
}

// Empty reports a sync with nothing to do.
func (a Actions) Empty() bool {
	return !a.KillPod && !a.CreateSandbox && a.NextInit == nil && len(a.Start) == 0 && len(a.Kill) == 0
}

func shouldRestartOnFailure(pod *corev1.Pod) bool {
	return status.RestartPolicy(pod.GetSpec()) != "Never"
}

func containerSucceeded(c *corev1.Container, st *PodStatus) bool {
	l := st.Latest(c.GetName())
	return l != nil && l.State == runtime.ContainerExited && l.ExitCode == 0
}

// sandboxChanged reports whether the pod needs a new sandbox: it has none,
// the newest is not ready, more than one is ready, or it has no IP.
func sandboxChanged(pod *corev1.Pod, st *PodStatus) (bool, int, string) {
	if len(st.Sandboxes) == 0 {
		return true, 0, ""
	}
	ready := 0
	for _, sb := range st.Sandboxes {
		if sb.State == runtime.SandboxReady {
			ready++
		}
	}
	sb := st.Sandboxes[0]
	switch {
	case ready > 1, sb.State != runtime.SandboxReady:
		return true, sb.Attempt + 1, sb.ID
	case sb.HostNetwork != pod.GetSpec().GetHostNetwork():
		return true, sb.Attempt + 1, sb.ID
	case !sb.HostNetwork && len(sb.IPs) == 0:
		return true, sb.Attempt + 1, sb.ID
	}
	return false, sb.Attempt, sb.ID
}

// ShouldRestart reports whether a container that is not running should be
// (re)started, by the pod's restart policy.
func ShouldRestart(c *corev1.Container, pod *corev1.Pod, st *PodStatus) bool {
	if pod.GetMetadata().GetDeletionTimestamp() != nil {
		return false
	}
	l := st.Latest(c.GetName())
	if l == nil {
		return true
	}
	switch l.State {
	case runtime.ContainerRunning:
		return false
	case runtime.ContainerUnknown, runtime.ContainerCreated:
		return true
	}
	switch status.RestartPolicy(pod.GetSpec()) {
	case "Never":
		return false
	case "OnFailure":
		return l.ExitCode != 0
	}
	return true
}

func initFailed(c *runtime.Container) bool {
	return c.State == runtime.ContainerExited && c.ExitCode != 0 || c.State == runtime.ContainerUnknown
}

// nextInitContainer finds the init container to run next; done is true
// once all have succeeded (or an app container runs).
func nextInitContainer(pod *corev1.Pod, st *PodStatus) (last *runtime.Container, next *corev1.Container, done bool) {
	inits := pod.GetSpec().GetInitContainers()
	if len(inits) == 0 {
		return nil, nil, true
	}
	for _, c := range pod.GetSpec().GetContainers() {
		if l := st.Latest(c.GetName()); l != nil && l.State == runtime.ContainerRunning {
			return nil, nil, true
		}
	}
	for i := len(inits) - 1; i >= 0; i-- {
		if l := st.Latest(inits[i].GetName()); l != nil && initFailed(l) {
			return l, inits[i], false
		}
	}
	for i := len(inits) - 1; i >= 0; i-- {
		l := st.Latest(inits[i].GetName())
		if l == nil {
			continue
		}
		switch l.State {
		case runtime.ContainerRunning:
			return nil, nil, false
		case runtime.ContainerExited:
			if i == len(inits)-1 {
				return nil, nil, true
			}
			return nil, inits[i+1], false
		case runtime.ContainerCreated:
			return l, inits[i], false
		}
	}
	return nil, inits[0], false
}

// ComputePodActions decides what a sync does to pod, as Kubernetes'
// computePodActions (without restartable init containers).
func ComputePodActions(pod *corev1.Pod, st *PodStatus, results ProbeResults) Actions {
	create, attempt, sandboxID := sandboxChanged(pod, st)
	a := Actions{KillPod: create, CreateSandbox: create, SandboxID: sandboxID, Attempt: attempt, Kill: map[string]KillInfo{}}
	containers := pod.GetSpec().GetContainers()

	if create {
		if !shouldRestartOnFailure(pod) && attempt != 0 && len(st.Containers) != 0 {
			// A pod that must not restart is not given a new sandbox.
			a.CreateSandbox = false
			return a
		}
		for i, c := range containers {
			if status.RestartPolicy(pod.GetSpec()) == "OnFailure" && containerSucceeded(c, st) {
				continue
			}
			a.Start = append(a.Start, i)
		}
		if len(a.Start) == 0 && len(pod.GetSpec().GetInitContainers()) == 0 {
			a.CreateSandbox = false
			return a
		}
		if inits := pod.GetSpec().GetInitContainers(); len(inits) > 0 {
			a.NextInit = inits[0]
			a.Start = nil
		}
		return a
	}

	last, next, done := nextInitContainer(pod, st)
	if !done {
		if next != nil {
			if last != nil && initFailed(last) && !shouldRestartOnFailure(pod) {
				a.KillPod = true
			} else {
				a.NextInit = next
			}
		}
		return a
	}

	keep := 0
	for i, c := range containers {
		l := st.Latest(c.GetName())
		if l == nil || l.State != runtime.ContainerRunning {
			if ShouldRestart(c, pod, st) {
				a.Start = append(a.Start, i)
			}
			continue
		}
		restart := shouldRestartOnFailure(pod)
		var msg string
		var probe *corev1.Probe
		if h := ContainerHash(c); l.Hash != "" && l.Hash != h {
			msg = fmt.Sprintf("Container %s definition changed", c.GetName())
			restart = true
		} else if r, ok := resultOf(results, probes.Liveness, l.ID); ok && r == probes.Failure && c.GetLivenessProbe() != nil {
			msg = fmt.Sprintf("Container %s failed liveness probe", c.GetName())
			probe = c.GetLivenessProbe()
		} else if r, ok := resultOf(results, probes.Startup, l.ID); ok && r == probes.Failure && c.GetStartupProbe() != nil {
			msg = fmt.Sprintf("Container %s failed startup probe", c.GetName())
			probe = c.GetStartupProbe()
		} else {
			keep++
			continue
		}
		if restart {
			msg += ", will be restarted"
			a.Start = append(a.Start, i)
		}
		a.Kill[l.ID] = KillInfo{Name: c.GetName(), Container: l, Message: msg, Probe: probe}
	}
	if keep == 0 && len(a.Start) == 0 {
		a.KillPod = true
	}
	return a
}

func resultOf(r ProbeResults, kind probes.Kind, id string) (probes.Result, bool) {
	if r == nil {
		return probes.Unknown, false
	}
	return r.Result(kind, id)
}
