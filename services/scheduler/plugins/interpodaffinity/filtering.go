package interpodaffinity

import (
	"context"
	"fmt"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

type preFilterState struct {
	// existingAntiAffinityCounts: domains where existing pods' required anti-affinity matches the incoming pod.
	existingAntiAffinityCounts topologyToMatchedTermCount
	// affinityCounts: domains holding pods that match all the incoming pod's required affinity terms.
	affinityCounts topologyToMatchedTermCount
	// antiAffinityCounts: domains holding pods that match one of its required anti-affinity terms.
	antiAffinityCounts topologyToMatchedTermCount
	podInfo            *framework.PodInfo
}

func (s *preFilterState) Clone() framework.StateData {
	return &preFilterState{
		existingAntiAffinityCounts: s.existingAntiAffinityCounts.clone(),
		affinityCounts:             s.affinityCounts.clone(),
		antiAffinityCounts:         s.antiAffinityCounts.clone(),
		podInfo:                    s.podInfo,
	}
}

// PreFilter counts the domains that matter for the incoming pod's required
// terms and for existing pods' required anti-affinity.
func (pl *InterPodAffinity) PreFilter(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	pi := framework.NewPodInfo(pod)
	if pi.ParseError != nil {
		return nil, framework.NewStatus(framework.UnschedulableAndUnresolvable, fmt.Sprintf("parsing pod: %v", pi.ParseError))
	}
	lister := pl.handle.SnapshotSharedLister().NodeInfos()
	s := &preFilterState{
		podInfo:                    pi,
		existingAntiAffinityCounts: topologyToMatchedTermCount{},
		affinityCounts:             topologyToMatchedTermCount{},
		antiAffinityCounts:         topologyToMatchedTermCount{},
	}
	for _, ni := range lister.HavePodsWithRequiredAntiAffinityList() {
		for _, existing := range ni.PodsWithRequiredAntiAffinity {
			s.existingAntiAffinityCounts.updateWithAntiAffinityTerms(existing.RequiredAntiAffinityTerms, pod, ni.Node(), 1)
		}
	}
	if len(pi.RequiredAffinityTerms) > 0 || len(pi.RequiredAntiAffinityTerms) > 0 {
		for _, ni := range nodes {
			if ni.Node() == nil {
				continue
			}
			for _, existing := range ni.Pods {
				s.affinityCounts.updateWithAffinityTerms(pi.RequiredAffinityTerms, existing.Pod, ni.Node(), 1)
				s.antiAffinityCounts.updateWithAntiAffinityTerms(pi.RequiredAntiAffinityTerms, existing.Pod, ni.Node(), 1)
			}
		}
	}
	if len(s.existingAntiAffinityCounts) == 0 && len(pi.RequiredAffinityTerms) == 0 && len(pi.RequiredAntiAffinityTerms) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, s)
	return nil, nil
}

func (pl *InterPodAffinity) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod counts a pod added to a node.
func (pl *InterPodAffinity) AddPod(_ context.Context, state *framework.CycleState, podToSchedule *corev1.Pod, pi *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	return updateWithPod(state, podToSchedule, pi, nodeInfo.Node(), 1)
}

// RemovePod uncounts a pod removed from a node.
func (pl *InterPodAffinity) RemovePod(_ context.Context, state *framework.CycleState, podToSchedule *corev1.Pod, pi *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	return updateWithPod(state, podToSchedule, pi, nodeInfo.Node(), -1)
}

func updateWithPod(state *framework.CycleState, podToSchedule *corev1.Pod, pi *framework.PodInfo, node *corev1.Node, delta int64) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil || node == nil {
		return nil
	}
	s.existingAntiAffinityCounts.updateWithAntiAffinityTerms(pi.RequiredAntiAffinityTerms, podToSchedule, node, delta)
	s.affinityCounts.updateWithAffinityTerms(s.podInfo.RequiredAffinityTerms, pi.Pod, node, delta)
	s.antiAffinityCounts.updateWithAntiAffinityTerms(s.podInfo.RequiredAntiAffinityTerms, pi.Pod, node, delta)
	return nil
}

// Filter applies the three rules in Kubernetes' order.
func (pl *InterPodAffinity) Filter(_ context.Context, state *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preFilterStateKey, err))
	}
	node := nodeInfo.Node()
	if !satisfyPodAffinity(s, node) {
		return statusAffinityNotMatch
	}
	if !satisfyPodAntiAffinity(s, node) {
		return statusAntiAffinityNotMatch
	}
	if !satisfyExistingPodsAntiAffinity(s, node) {
		return statusExistingAntiAffinityNotMatch
	}
	return nil
}

func satisfyExistingPodsAntiAffinity(s *preFilterState, node *corev1.Node) bool {
	if len(s.existingAntiAffinityCounts) == 0 {
		return true
	}
	for k, v := range node.GetMetadata().GetLabels() {
		if s.existingAntiAffinityCounts[topologyPair{k, v}] > 0 {
			return false
		}
	}
	return true
}

func satisfyPodAntiAffinity(s *preFilterState, node *corev1.Node) bool {
	if len(s.antiAffinityCounts) == 0 {
		return true
	}
	for _, t := range s.podInfo.RequiredAntiAffinityTerms {
		if v, ok := node.GetMetadata().GetLabels()[t.TopologyKey]; ok && s.antiAffinityCounts[topologyPair{t.TopologyKey, v}] > 0 {
			return false
		}
	}
	return true
}

func satisfyPodAffinity(s *preFilterState, node *corev1.Node) bool {
	podsExist := true
	for _, t := range s.podInfo.RequiredAffinityTerms {
		v, ok := node.GetMetadata().GetLabels()[t.TopologyKey]
		if !ok {
			return false // every topology key must be on the node
		}
		if s.affinityCounts[topologyPair{t.TopologyKey, v}] <= 0 {
			podsExist = false
		}
	}
	if podsExist {
		return true
	}
	// The first pod of a group with affinity to itself may go anywhere.
	return len(s.affinityCounts) == 0 && matchesAll(s.podInfo.RequiredAffinityTerms, s.podInfo.Pod)
}

// Rejections are prebuilt: Filter runs in parallel for every node.
var (
	statusAffinityNotMatch             = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch).WithPlugin(Name)
	statusAntiAffinityNotMatch         = framework.NewStatus(framework.Unschedulable, ErrReasonAntiAffinityRulesNotMatch).WithPlugin(Name)
	statusExistingAntiAffinityNotMatch = framework.NewStatus(framework.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch).WithPlugin(Name)
)
