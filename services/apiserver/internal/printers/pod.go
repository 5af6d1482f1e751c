package printers

import (
	"fmt"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

var podColumns = []Column{
	nameColumn,
	{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
	{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
	{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
	ageColumn,
	{Name: "IP", Type: "string", Priority: 1, Description: "IP address allocated to the pod. Routable at least within the cluster."},
	{Name: "Node", Type: "string", Priority: 1, Description: "NodeName is the node the pod is scheduled onto."},
	{Name: "Nominated Node", Type: "string", Priority: 1, Description: "nominatedNodeName is set when this pod preempts other pods on the node."},
	{Name: "Readiness Gates", Type: "string", Priority: 1, Description: "If specified, all readiness gates will be evaluated for pod readiness."},
}

func init() {
	register(&corev1.Pod{}, handler{columns: podColumns, row: podRow})
}

// podRow prints a pod as kubectl does; a finished pod's row carries a
// Completed condition.
func podRow(m proto.Message, now time.Time) Row {
	pod := m.(*corev1.Pod)
	st := podState(pod)
	restarts := strconv.Itoa(st.restarts)
	if st.restarts != 0 && st.lastRestart > 0 {
		restarts = fmt.Sprintf("%d (%s ago)", st.restarts, humanDuration(now.Sub(time.Unix(st.lastRestart, 0))))
	}
	row := Row{Cells: []any{
		pod.GetMetadata().GetName(),
		fmt.Sprintf("%d/%d", st.ready, st.total),
		st.reason,
		restarts,
		since(pod.GetMetadata().GetCreationTimestamp(), now),
		orNone(podIP(pod)),
		orNone(pod.GetSpec().GetNodeName()),
		orNone(pod.GetStatus().GetNominatedNodeName()),
		readinessGates(pod),
	}}
	switch pod.GetStatus().GetPhase() {
	case "Succeeded":
		row.Conditions = []RowCondition{{Type: "Completed", Status: "True", Reason: "Succeeded", Message: "The pod has completed successfully."}}
	case "Failed":
		row.Conditions = []RowCondition{{Type: "Completed", Status: "True", Reason: "Failed", Message: "The pod failed."}}
	}
	return row
}

// podSummary is what the READY, STATUS and RESTARTS columns show.
type podSummary struct {
	ready, total int
	reason       string
	restarts     int
	// lastRestart is the Unix time the last restarted container last
	// finished (0: unknown).
	lastRestart int64
}

// podState computes READY, STATUS and RESTARTS as kubectl does: the phase
// or the status reason, overridden by the first unfinished init container
// (Init:<reason>, Init:ExitCode:<n>, Init:<i>/<n>), then by the containers'
// waiting or terminated reasons, then Terminating while the pod is deleted.
// Sidecars (init containers with restartPolicy Always) count as containers.
func podState(pod *corev1.Pod) podSummary {
	spec, status := pod.GetSpec(), pod.GetStatus()
	s := podSummary{total: len(spec.GetContainers()), reason: status.GetPhase()}
	if status.GetReason() != "" {
		s.reason = status.GetReason()
	}
	for _, c := range status.GetConditions() {
		if c.GetType() == "PodScheduled" && c.GetReason() == "SchedulingGated" {
			s.reason = "SchedulingGated"
		}
	}
	sidecars := map[string]bool{}
	for _, c := range spec.GetInitContainers() {
		if c.GetRestartPolicy() == "Always" {
			sidecars[c.GetName()] = true
			s.total++
		}
	}
	var sidecarRestarts int
	var sidecarLastRestart int64
	initializing := false
	for i, c := range status.GetInitContainerStatuses() {
		s.restarts += int(c.GetRestartCount())
		s.lastRestart = later(s.lastRestart, c.GetLastState().GetTerminated().GetFinishedAt())
		if sidecars[c.GetName()] {
			sidecarRestarts += int(c.GetRestartCount())
			sidecarLastRestart = later(sidecarLastRestart, c.GetLastState().GetTerminated().GetFinishedAt())
		}
		term, wait := c.GetState().GetTerminated(), c.GetState().GetWaiting()
		switch {
		case term != nil && term.GetExitCode() == 0:
			continue
		case sidecars[c.GetName()] && c.GetStarted():
			if c.GetReady() {
				s.ready++
			}
			continue
		case term != nil:
			s.reason = "Init:" + terminatedReason(term)
		case wait != nil && wait.GetReason() != "" && wait.GetReason() != "PodInitializing":
			s.reason = "Init:" + wait.GetReason()
		default:
			s.reason = fmt.Sprintf("Init:%d/%d", i, len(spec.GetInitContainers()))
		}
		initializing = true
		break
	}
	if !initializing || conditionTrue(status.GetConditions(), "Initialized") {
		s.restarts, s.lastRestart = sidecarRestarts, sidecarLastRestart
		running := false
		cs := status.GetContainerStatuses()
		for i := len(cs) - 1; i >= 0; i-- {
			c := cs[i]
			s.restarts += int(c.GetRestartCount())
			s.lastRestart = later(s.lastRestart, c.GetLastState().GetTerminated().GetFinishedAt())
			term, wait := c.GetState().GetTerminated(), c.GetState().GetWaiting()
			switch {
			case wait != nil && wait.GetReason() != "":
				s.reason = wait.GetReason()
			case term != nil:
				s.reason = terminatedReason(term)
			case c.GetReady() && c.GetState().GetRunning() != nil:
				running = true
				s.ready++
			}
		}
		// A pod with a container still running is not Completed.
		if s.reason == "Completed" && running {
			s.reason = "NotReady"
			if conditionTrue(status.GetConditions(), "Ready") {
				s.reason = "Running"
			}
		}
	}
	if pod.GetMetadata().GetDeletionTimestamp() != nil {
		switch {
		case status.GetReason() == "NodeLost":
			s.reason = "Unknown"
		case status.GetPhase() != "Succeeded" && status.GetPhase() != "Failed":
			s.reason = "Terminating"
		}
	}
	return s
}

// terminatedReason is a terminated container's reason, or its signal or
// exit code when it has none.
func terminatedReason(t *corev1.ContainerStateTerminated) string {
	switch {
	case t.GetReason() != "":
		return t.GetReason()
	case t.GetSignal() != 0:
		return fmt.Sprintf("Signal:%d", t.GetSignal())
	}
	return fmt.Sprintf("ExitCode:%d", t.GetExitCode())
}

func later(cur int64, t *metav1.Time) int64 {
	if t.GetSeconds() > cur {
		return t.GetSeconds()
	}
	return cur
}

func conditionTrue(conds []*corev1.PodCondition, typ string) bool {
	for _, c := range conds {
		if c.GetType() == typ {
			return c.GetStatus() == "True"
		}
	}
	return false
}

func podIP(pod *corev1.Pod) string {
	if ips := pod.GetStatus().GetPodIps(); len(ips) > 0 {
		return ips[0].GetIp()
	}
	return pod.GetStatus().GetPodIp()
}

// readinessGates is "<true>/<gates>", or <none> without gates.
func readinessGates(pod *corev1.Pod) string {
	gates := pod.GetSpec().GetReadinessGates()
	if len(gates) == 0 {
		return "<none>"
	}
	n := 0
	for _, g := range gates {
		if conditionTrue(pod.GetStatus().GetConditions(), g.GetConditionType()) {
			n++
		}
	}
	return fmt.Sprintf("%d/%d", n, len(gates))
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
