package status

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/probes"
	"podline.dev/services/kubelet/internal/resource"
	"podline.dev/services/kubelet/internal/runtime"
)

// Condition types and reasons, as Kubernetes names them.
const (
	PodScheduled              = "PodScheduled"
	PodReadyToStartContainers = "PodReadyToStartContainers"
	Initialized               = "Initialized"
	ContainersReady           = "ContainersReady"
	Ready                     = "Ready"

	ReasonContainersNotInitialized = "ContainersNotInitialized"
	ReasonContainersNotReady       = "ContainersNotReady"
	ReasonPodCompleted             = "PodCompleted"
	ReasonReadinessGatesNotReady   = "ReadinessGatesNotReady"

	RuntimePrefix = "containerd://"
)

// Waiting is why the last sync left a container waiting.
type Waiting struct {
	Reason  string
	Message string
}

// ProbeResults answers what a container instance's probes last said.
type ProbeResults interface {
	Result(kind probes.Kind, containerID string) (probes.Result, bool)
}

// Input is everything a pod's status is computed from.
type Input struct {
	// Pod is the pod with the status last reported.
	Pod        *corev1.Pod
	Sandboxes  []*runtime.Sandbox
	Containers []*runtime.Container
	// Waiting holds, by container name, why the last sync did not start it.
	Waiting map[string]Waiting
	Probes  ProbeResults
	HostIPs []string
	Now     time.Time
	// Terminal: the kubelet has stopped the pod for good (deleted, or
	// finished); its phase is Succeeded or Failed.
	Terminal bool
}

// Compute derives the pod's status.
func Compute(in Input) *corev1.PodStatus {
	pod := in.Pod
	old := pod.GetStatus()
	spec := pod.GetSpec()
	st := &corev1.PodStatus{
		ObservedGeneration: pod.GetMetadata().GetGeneration(),
		NominatedNodeName:  old.GetNominatedNodeName(),
		QosClass:           QOSClass(pod),
		StartTime:          old.GetStartTime(),
	}
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Seconds: in.Now.Unix()}
	}
	if len(in.HostIPs) > 0 {
		st.HostIp = in.HostIPs[0]
		for _, ip := range in.HostIPs {
			st.HostIps = append(st.HostIps, &corev1.HostIP{Ip: ip})
		}
	}
	sb := latestSandbox(in.Sandboxes)
	var podIPs []string
	if spec.GetHostNetwork() {
		podIPs = in.HostIPs
	} else if sb != nil {
		podIPs = sb.IPs
	}
	if len(podIPs) > 0 {
		st.PodIp = podIPs[0]
		for _, ip := range podIPs {
			st.PodIps = append(st.PodIps, &corev1.PodIP{Ip: ip})
		}
	}

	byName := instancesByName(in.Containers)
	initDone := initContainersDone(spec, byName)
	for _, c := range spec.GetInitContainers() {
		st.InitContainerStatuses = append(st.InitContainerStatuses, containerStatus(in, c, byName[c.GetName()], true, "PodInitializing"))
	}
	appWaiting := "ContainerCreating"
	if !initDone {
		appWaiting = "PodInitializing"
	}
	for _, c := range spec.GetContainers() {
		st.ContainerStatuses = append(st.ContainerStatuses, containerStatus(in, c, byName[c.GetName()], false, appWaiting))
	}

	st.Phase = Phase(spec, st.InitContainerStatuses, st.ContainerStatuses)
	if in.Terminal && st.Phase != "Succeeded" && st.Phase != "Failed" {
		st.Phase = "Failed"
		if allSucceeded(st.ContainerStatuses) {
			st.Phase = "Succeeded"
		}
	}
	st.Conditions = conditions(in, st, sb, initDone)
	return st
}

// latestSandbox is the newest sandbox, preferring a ready one.
func latestSandbox(sbs []*runtime.Sandbox) *runtime.Sandbox {
	var best *runtime.Sandbox
	for _, sb := range sbs {
		switch {
		case best == nil:
			best = sb
		case (sb.State == runtime.SandboxReady) != (best.State == runtime.SandboxReady):
			if sb.State == runtime.SandboxReady {
				best = sb
			}
		case sb.CreatedAt.After(best.CreatedAt):
			best = sb
		}
	}
	return best
}

// instancesByName groups container instances by name, newest first.
func instancesByName(cs []*runtime.Container) map[string][]*runtime.Container {
	out := map[string][]*runtime.Container{}
	for _, c := range cs {
		out[c.Name] = append(out[c.Name], c)
	}
	for _, list := range out {
		sort.SliceStable(list, func(i, j int) bool {
			if list[i].Attempt != list[j].Attempt {
				return list[i].Attempt > list[j].Attempt
			}
			return list[i].CreatedAt.After(list[j].CreatedAt)
		})
	}
	return out
}

// initContainersDone: every init container has exited 0, or an app
// container has been created already.
func initContainersDone(spec *corev1.PodSpec, byName map[string][]*runtime.Container) bool {
	for _, c := range spec.GetContainers() {
		if len(byName[c.GetName()]) > 0 {
			return true
		}
	}
	for _, c := range spec.GetInitContainers() {
		list := byName[c.GetName()]
		if len(list) == 0 || list[0].State != runtime.ContainerExited || list[0].ExitCode != 0 {
			return false
		}
	}
	return true
}

func timeOf(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Seconds: t.Unix()}
}

func terminated(c *runtime.Container) *corev1.ContainerState {
	reason := c.Reason
	if reason == "" {
		reason = "Completed"
		if c.ExitCode != 0 {
			reason = "Error"
		}
	}
	return &corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode:    int32(c.ExitCode),
		Reason:      reason,
		Message:     c.Message,
		StartedAt:   timeOf(c.StartedAt),
		FinishedAt:  timeOf(c.FinishedAt),
		ContainerId: RuntimePrefix + c.ID,
	}}
}

func containerStatus(in Input, spec *corev1.Container, instances []*runtime.Container, init bool, defaultWaiting string) *corev1.ContainerStatus {
	cs := &corev1.ContainerStatus{Name: spec.GetName(), Image: spec.GetImage()}
	if !init {
		cs.Started = new(bool)
	}
	waiting, hasWaiting := in.Waiting[spec.GetName()]
	if len(instances) == 0 {
		w := &corev1.ContainerStateWaiting{Reason: defaultWaiting}
		if hasWaiting {
			w = &corev1.ContainerStateWaiting{Reason: waiting.Reason, Message: waiting.Message}
		}
		cs.State = &corev1.ContainerState{Waiting: w}
		return cs
	}
	latest := instances[0]
	cs.ContainerId = RuntimePrefix + latest.ID
	cs.ImageId = latest.ImageID
	cs.RestartCount = int32(latest.Attempt)
	if len(instances) > 1 && instances[1].State == runtime.ContainerExited {
		cs.LastState = terminated(instances[1])
	}
	switch latest.State {
	case runtime.ContainerRunning:
		cs.State = &corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: timeOf(latest.StartedAt)}}
		started := true
		if spec.GetStartupProbe() != nil {
			r, _ := result(in.Probes, probes.Startup, latest.ID)
			started = r == probes.Success
		}
		if !init {
			*cs.Started = started
		}
		ready := started
		if spec.GetReadinessProbe() != nil {
			r, _ := result(in.Probes, probes.Readiness, latest.ID)
			ready = ready && r == probes.Success
		}
		cs.Ready = ready && !init
	case runtime.ContainerExited:
		if hasWaiting && !in.Terminal {
			// About to be restarted (or held back): waiting, with the
			// exit it waits after as the last state.
			cs.State = &corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting.Reason, Message: waiting.Message}}
			cs.LastState = terminated(latest)
		} else {
			cs.State = terminated(latest)
		}
		cs.Ready = init && latest.ExitCode == 0
	default:
		reason := "ContainerCreating"
		if hasWaiting {
			reason = waiting.Reason
		}
		cs.State = &corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: waiting.Message}}
	}
	return cs
}

func result(p ProbeResults, kind probes.Kind, id string) (probes.Result, bool) {
	if p == nil {
		return probes.Unknown, false
	}
	return p.Result(kind, id)
}

func allSucceeded(cs []*corev1.ContainerStatus) bool {
	for _, c := range cs {
		t := c.GetState().GetTerminated()
		if t == nil || t.GetExitCode() != 0 {
			return false
		}
	}
	return len(cs) > 0
}

// RestartPolicy is the pod's restart policy, defaulted to Always.
func RestartPolicy(spec *corev1.PodSpec) string {
	if p := spec.GetRestartPolicy(); p != "" {
		return p
	}
	return "Always"
}

// Phase is Kubernetes' pod phase for these container statuses.
func Phase(spec *corev1.PodSpec, initStatuses, statuses []*corev1.ContainerStatus) string {
	policy := RestartPolicy(spec)
	pendingInit, failedInit := 0, 0
	for _, cs := range initStatuses {
		switch st := cs.GetState(); {
		case st.GetRunning() != nil:
			pendingInit++
		case st.GetTerminated() != nil:
			if st.GetTerminated().GetExitCode() != 0 {
				failedInit++
			}
		case st.GetWaiting() != nil:
			if t := cs.GetLastState().GetTerminated(); t != nil {
				if t.GetExitCode() != 0 {
					failedInit++
				}
			} else {
				pendingInit++
			}
		default:
			pendingInit++
		}
	}
	unknown, running, waiting, stopped, succeeded := 0, 0, 0, 0, 0
	for _, cs := range statuses {
		switch st := cs.GetState(); {
		case st.GetRunning() != nil:
			running++
		case st.GetTerminated() != nil:
			stopped++
			if st.GetTerminated().GetExitCode() == 0 {
				succeeded++
			}
		case st.GetWaiting() != nil:
			if cs.GetLastState().GetTerminated() != nil {
				stopped++
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}
	if failedInit > 0 && policy == "Never" {
		return "Failed"
	}
	switch {
	case pendingInit > 0, failedInit > 0:
		return "Pending"
	case waiting > 0:
		return "Pending"
	case running > 0 && unknown == 0:
		return "Running"
	case running == 0 && stopped > 0 && unknown == 0:
		if policy == "Always" {
			return "Running"
		}
		if stopped == succeeded {
			return "Succeeded"
		}
		if policy == "Never" {
			return "Failed"
		}
		return "Running"
	}
	return "Pending"
}

// conditionOrder is the order Kubernetes lists the kubelet's conditions in.
var conditionOrder = []string{PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled}

func conditions(in Input, st *corev1.PodStatus, sb *runtime.Sandbox, initDone bool) []*corev1.PodCondition {
	old := map[string]*corev1.PodCondition{}
	for _, c := range in.Pod.GetStatus().GetConditions() {
		old[c.GetType()] = c
	}
	set := func(typ string, ok bool, reason, message string) *corev1.PodCondition {
		status := "False"
		if ok {
			status, reason, message = "True", "", ""
		}
		c := &corev1.PodCondition{Type: typ, Status: status, Reason: reason, Message: message,
			LastTransitionTime: &metav1.Time{Seconds: in.Now.Unix()}}
		if prev := old[typ]; prev != nil && prev.GetStatus() == status && prev.GetLastTransitionTime() != nil {
			c.LastTransitionTime = prev.GetLastTransitionTime()
		}
		return c
	}
	sandboxReady := sb != nil && sb.State == runtime.SandboxReady && (len(sb.IPs) > 0 || in.Pod.GetSpec().GetHostNetwork()) && !in.Terminal
	completed := st.Phase == "Succeeded"

	var notInit []string
	if !initDone {
		for _, cs := range st.InitContainerStatuses {
			if t := cs.GetState().GetTerminated(); t == nil || t.GetExitCode() != 0 {
				notInit = append(notInit, cs.GetName())
			}
		}
	}
	var unready []string
	for _, cs := range st.ContainerStatuses {
		if !cs.GetReady() {
			unready = append(unready, cs.GetName())
		}
	}
	initMsg := fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(notInit, " "))
	readyMsg := fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	readyReason := ReasonContainersNotReady
	if completed {
		readyReason = ReasonPodCompleted
		readyMsg = ""
	}
	containersReady := len(unready) == 0 && !completed
	podReady, podReason, podMsg := containersReady, readyReason, readyMsg
	if podReady {
		var gates []string
		for _, g := range in.Pod.GetSpec().GetReadinessGates() {
			if c := old[g.GetConditionType()]; c == nil || c.GetStatus() != "True" {
				gates = append(gates, g.GetConditionType())
			}
		}
		if len(gates) > 0 {
			podReady, podReason = false, ReasonReadinessGatesNotReady
			podMsg = fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", gates[0])
		}
	}
	initReason := ReasonContainersNotInitialized
	if completed && !initDone {
		initReason = ReasonPodCompleted
	}
	mine := map[string]*corev1.PodCondition{
		PodReadyToStartContainers: set(PodReadyToStartContainers, sandboxReady, "", ""),
		Initialized:               set(Initialized, initDone, initReason, initMsg),
		ContainersReady:           set(ContainersReady, containersReady, readyReason, readyMsg),
		Ready:                     set(Ready, podReady, podReason, podMsg),
	}
	if prev := old[PodScheduled]; prev != nil {
		mine[PodScheduled] = prev
	} else {
		mine[PodScheduled] = set(PodScheduled, true, "", "")
	}
	out := make([]*corev1.PodCondition, 0, len(conditionOrder)+len(old))
	for _, typ := range conditionOrder {
		out = append(out, mine[typ])
	}
	for _, c := range in.Pod.GetStatus().GetConditions() {
		if mine[c.GetType()] == nil {
			out = append(out, c) // not the kubelet's: kept as is
		}
	}
	return out
}

// QOSClass is the pod's quality-of-service class.
func QOSClass(pod *corev1.Pod) string {
	all := append(append([]*corev1.Container{}, pod.GetSpec().GetInitContainers()...), pod.GetSpec().GetContainers()...)
	anySet, guaranteed := false, true
	for _, c := range all {
		req, lim := resource.ContainerRequests(c), resource.ContainerLimits(c)
		if len(req) > 0 || len(lim) > 0 {
			anySet = true
		}
		for _, r := range []string{resource.CPU, resource.Memory} {
			if lim[r] == 0 || req[r] != lim[r] {
				guaranteed = false
			}
		}
	}
	switch {
	case !anySet:
		return "BestEffort"
	case guaranteed:
		return "Guaranteed"
	}
	return "Burstable"
}
