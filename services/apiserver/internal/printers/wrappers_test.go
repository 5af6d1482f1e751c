package printers

import (
	"time"

	corev1 "podline.dev/proto/core/v1"
)

// podWrapper builds pods for tests: MakePod("a").Phase("Running").Running("c", true).Obj().
type podWrapper struct{ p *corev1.Pod }

func MakePod(name string) *podWrapper {
	return &podWrapper{&corev1.Pod{Metadata: meta(name, 2*time.Minute), Spec: &corev1.PodSpec{}, Status: &corev1.PodStatus{}}}
}

func (w *podWrapper) Obj() *corev1.Pod { return w.p }

func (w *podWrapper) Phase(p string) *podWrapper  { w.p.Status.Phase = p; return w }
func (w *podWrapper) Reason(r string) *podWrapper { w.p.Status.Reason = r; return w }
func (w *podWrapper) Node(n string) *podWrapper   { w.p.Spec.NodeName = n; return w }
func (w *podWrapper) IP(ip string) *podWrapper {
	w.p.Status.PodIp = ip
	w.p.Status.PodIps = []*corev1.PodIP{{Ip: ip}}
	return w
}
func (w *podWrapper) Nominated(n string) *podWrapper { w.p.Status.NominatedNodeName = n; return w }
func (w *podWrapper) Deleting() *podWrapper {
	w.p.Metadata.DeletionTimestamp = ago(time.Second)
	return w
}
func (w *podWrapper) Condition(typ, status, reason string) *podWrapper {
	w.p.Status.Conditions = append(w.p.Status.Conditions, &corev1.PodCondition{Type: typ, Status: status, Reason: reason})
	return w
}
func (w *podWrapper) Gate(typ string) *podWrapper {
	w.p.Spec.ReadinessGates = append(w.p.Spec.ReadinessGates, &corev1.PodReadinessGate{ConditionType: typ})
	return w
}

// Container adds a container and its status in the given state.
func (w *podWrapper) Container(name string, st *corev1.ContainerStatus) *podWrapper {
	w.p.Spec.Containers = append(w.p.Spec.Containers, &corev1.Container{Name: name})
	if st != nil {
		st.Name = name
		w.p.Status.ContainerStatuses = append(w.p.Status.ContainerStatuses, st)
	}
	return w
}

// Init adds an init container (a sidecar when sidecar is set) and its status.
func (w *podWrapper) Init(name string, sidecar bool, st *corev1.ContainerStatus) *podWrapper {
	c := &corev1.Container{Name: name}
	if sidecar {
		always := "Always"
		c.RestartPolicy = &always
	}
	w.p.Spec.InitContainers = append(w.p.Spec.InitContainers, c)
	if st != nil {
		st.Name = name
		w.p.Status.InitContainerStatuses = append(w.p.Status.InitContainerStatuses, st)
	}
	return w
}

func running(ready bool) *corev1.ContainerStatus {
	return &corev1.ContainerStatus{Ready: ready, Started: &ready, State: &corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ago(time.Minute)}}}
}

func waiting(reason string) *corev1.ContainerStatus {
	return &corev1.ContainerStatus{State: &corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
}

func terminated(code int32, reason string) *corev1.ContainerStatus {
	return &corev1.ContainerStatus{State: &corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason}}}
}

// restarted records n restarts, the last one finished d ago.
func restarted(st *corev1.ContainerStatus, n int32, d time.Duration) *corev1.ContainerStatus {
	st.RestartCount = n
	st.LastState = &corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: ago(d)}}
	return st
}

func podCases() []*corev1.Pod {
	return []*corev1.Pod{
		MakePod("pending").Phase("Pending").Container("c", nil).Obj(),
		MakePod("gated").Phase("Pending").Condition("PodScheduled", "False", "SchedulingGated").Container("c", nil).Obj(),
		MakePod("creating").Phase("Pending").Node("node-1").Container("c", waiting("ContainerCreating")).Obj(),
		MakePod("running").Phase("Running").Node("node-1").IP("10.244.1.2").Container("a", running(true)).Container("b", running(true)).Obj(),
		MakePod("half-ready").Phase("Running").Node("node-1").IP("10.244.1.3").Container("a", running(true)).Container("b", running(false)).Obj(),
		MakePod("crashing").Phase("Running").Node("node-1").IP("10.244.1.4").Container("c", restarted(waiting("CrashLoopBackOff"), 5, 3*time.Minute)).Obj(),
		MakePod("completed").Phase("Succeeded").Node("node-1").Container("c", terminated(0, "Completed")).Obj(),
		MakePod("exit-code").Phase("Failed").Node("node-1").Container("c", terminated(2, "")).Obj(),
		MakePod("signal").Phase("Failed").Node("node-1").Container("c", &corev1.ContainerStatus{State: &corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Signal: 9}}}).Obj(),
		MakePod("evicted").Phase("Failed").Reason("Evicted").Node("node-1").Container("c", nil).Obj(),
		MakePod("init-progress").Phase("Pending").Node("node-1").
			Init("i1", false, terminated(0, "Completed")).Init("i2", false, running(false)).Init("i3", false, waiting("PodInitializing")).
			Container("c", waiting("PodInitializing")).Obj(),
		MakePod("init-crash").Phase("Pending").Node("node-1").
			Init("i1", false, restarted(waiting("CrashLoopBackOff"), 2, 30*time.Second)).Container("c", waiting("PodInitializing")).Obj(),
		MakePod("init-error").Phase("Pending").Node("node-1").Init("i1", false, terminated(1, "Error")).Container("c", waiting("PodInitializing")).Obj(),
		MakePod("init-exit").Phase("Pending").Node("node-1").Init("i1", false, terminated(3, "")).Container("c", waiting("PodInitializing")).Obj(),
		MakePod("sidecar").Phase("Running").Node("node-1").IP("10.244.1.5").Condition("Initialized", "True", "").
			Init("proxy", true, restarted(running(true), 1, 20*time.Minute)).Container("app", running(true)).Obj(),
		MakePod("terminating").Phase("Running").Node("node-1").IP("10.244.1.6").Deleting().Container("c", running(true)).Obj(),
		MakePod("done-deleting").Phase("Succeeded").Node("node-1").Deleting().Container("c", terminated(0, "Completed")).Obj(),
		MakePod("node-lost").Phase("Running").Reason("NodeLost").Node("node-1").Deleting().Container("c", running(true)).Obj(),
		MakePod("one-still-running").Phase("Running").Node("node-1").IP("10.244.1.7").Condition("Ready", "True", "").
			Container("a", running(true)).Container("b", terminated(0, "Completed")).Obj(),
		MakePod("gates").Phase("Running").Node("node-2").IP("10.244.2.2").Nominated("node-3").
			Gate("example.com/lb").Gate("example.com/fw").Condition("example.com/lb", "True", "").Condition("example.com/fw", "False", "").
			Container("c", running(true)).Obj(),
	}
}
