package replicaset

import (
	"sort"
	"strconv"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/controller-manager/internal/controller"
)

// PodDeletionCostAnnotation ranks pods for scale-down: lower cost goes first.
const PodDeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

var phaseOrdinal = map[string]int{controller.PodPending: 0, controller.PodUnknown: 1, controller.PodRunning: 2}

// podsToDelete picks n of pods to delete, least valuable first. related
// are the pods of every ReplicaSet of the same owner: a pod sharing its node
// with more of them goes before one that does not.
func podsToDelete(pods, related []*corev1.Pod, n int) []*corev1.Pod {
	if n >= len(pods) {
		return pods
	}
	onNode := map[string]int{}
	for _, p := range related {
		if controller.IsPodActive(p) && p.GetSpec().GetNodeName() != "" {
			onNode[p.GetSpec().GetNodeName()]++
		}
	}
	ranked := make([]rankedPod, len(pods))
	for i, p := range pods {
		ranked[i] = rankedPod{pod: p, rank: onNode[p.GetSpec().GetNodeName()]}
		if p.GetSpec().GetNodeName() == "" {
			ranked[i].rank = 0
		}
	}
	sort.SliceStable(ranked, func(i, j int) bool { return less(ranked[i], ranked[j]) })
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = ranked[i].pod
	}
	return out
}

type rankedPod struct {
	pod  *corev1.Pod
	rank int
}

// less is Kubernetes' ActivePodsWithRanks order: a before b means a is
// deleted first.
func less(a, b rankedPod) bool {
	pa, pb := a.pod, b.pod
	na, nb := pa.GetSpec().GetNodeName(), pb.GetSpec().GetNodeName()
	if na != nb && (na == "" || nb == "") {
		return na == ""
	}
	if oa, ob := phaseOrdinal[pa.GetStatus().GetPhase()], phaseOrdinal[pb.GetStatus().GetPhase()]; oa != ob {
		return oa < ob
	}
	if ra, rb := controller.IsPodReady(pa), controller.IsPodReady(pb); ra != rb {
		return !ra
	}
	if ca, cb := deletionCost(pa), deletionCost(pb); ca != cb {
		return ca < cb
	}
	if a.rank != b.rank {
		return a.rank > b.rank
	}
	if controller.IsPodReady(pa) && controller.IsPodReady(pb) {
		ta, tb := readySince(pa), readySince(pb)
		if ta != tb {
			return afterOrZero(ta, tb)
		}
	}
	if ra, rb := maxRestarts(pa), maxRestarts(pb); ra != rb {
		return ra > rb
	}
	ca, cb := pa.GetMetadata().GetCreationTimestamp().GetSeconds(), pb.GetMetadata().GetCreationTimestamp().GetSeconds()
	if ca != cb {
		return afterOrZero(ca, cb)
	}
	return false
}

// afterOrZero: an unset time (0) sorts first, then the later one.
func afterOrZero(a, b int64) bool {
	if a == 0 || b == 0 {
		return a == 0
	}
	return a > b
}

func readySince(p *corev1.Pod) int64 {
	if c := controller.GetPodCondition(p, controller.PodReady); c != nil {
		return c.GetLastTransitionTime().GetSeconds()
	}
	return 0
}

func maxRestarts(p *corev1.Pod) int32 {
	var m int32
	for _, cs := range p.GetStatus().GetContainerStatuses() {
		m = max(m, cs.GetRestartCount())
	}
	return m
}

func deletionCost(p *corev1.Pod) int32 {
	v, ok := p.GetMetadata().GetAnnotations()[PodDeletionCostAnnotation]
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}
