package podtopologyspread

import (
	"context"
	"fmt"
	"math"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/plugins/helper"
)

const preFilterStateKey framework.StateKey = "PreFilter" + Name

// count is one node's count for one constraint (ok false: the node does not count for it).
type count struct {
	value string
	n     int
	ok    bool
}

// preFilterState holds, per DoNotSchedule constraint, the matching pods per topology value.
type preFilterState struct {
	Constraints []constraint
	// TpValueToMatchNum[i][value] counts matching pods in that domain of constraint i.
	TpValueToMatchNum []map[string]int
	// minMatch[i] is the global minimum of constraint i, kept up to date.
	minMatch []int
	// selfMatch[i] is 1 when the incoming pod matches constraint i's selector.
	selfMatch []int
}

func (s *preFilterState) Clone() framework.StateData {
	if s == nil {
		return nil
	}
	c := &preFilterState{Constraints: s.Constraints, TpValueToMatchNum: make([]map[string]int, len(s.TpValueToMatchNum)),
		minMatch: append([]int(nil), s.minMatch...), selfMatch: s.selfMatch}
	for i, m := range s.TpValueToMatchNum {
		c.TpValueToMatchNum[i] = make(map[string]int, len(m))
		for k, v := range m {
			c.TpValueToMatchNum[i][k] = v
		}
	}
	return c
}

// updateMins recomputes every constraint's global minimum.
func (s *preFilterState) updateMins() {
	s.minMatch = make([]int, len(s.Constraints))
	for i := range s.Constraints {
		s.minMatch[i] = s.computeMin(i)
	}
}

// computeMin is the smallest count over constraint i's domains, or 0 when
// there are fewer domains than minDomains.
func (s *preFilterState) computeMin(i int) int {
	m := s.TpValueToMatchNum[i]
	if int32(len(m)) < s.Constraints[i].MinDomains {
		return 0
	}
	low := math.MaxInt
	for _, n := range m {
		low = min(low, n)
	}
	if low == math.MaxInt {
		return 0
	}
	return low
}

// PreFilter counts, for each hard constraint, the matching pods in each
// domain over the nodes that count (node affinity honored, taints ignored
// by default).
func (pl *PodTopologySpread) PreFilter(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, nodes []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	cs, err := constraints(pod, DoNotSchedule)
	if err != nil {
		return nil, framework.AsStatus(fmt.Errorf("obtaining pod's hard topology spread constraints: %w", err))
	}
	if len(cs) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	s := &preFilterState{Constraints: cs, TpValueToMatchNum: make([]map[string]int, len(cs))}
	for i := range cs {
		s.TpValueToMatchNum[i] = make(map[string]int, min(len(nodes), 64))
	}
	req := helper.GetRequiredNodeAffinity(pod)
	ns := pod.GetMetadata().GetNamespace()
	if useIndex && pl.countFromIndex(s, pod, len(nodes)) {
		state.Write(preFilterStateKey, s)
		return nil, nil
	}

	// counts[n*len(cs)+i] is node n's count for constraint i (ok false: the
	// node does not count for it).
	pl.scratchMu.Lock()
	defer pl.scratchMu.Unlock()
	counts := pl.scratch[:0]
	if cap(counts) < len(nodes)*len(cs) {
		counts = make([]count, 0, len(nodes)*len(cs))
	}
	counts = counts[:len(nodes)*len(cs)]
	clear(counts)
	pl.scratch = counts
	pl.parallelizer.Until(ctx, len(nodes), func(n int) {
		node := nodes[n].Node()
		if node == nil || !nodeHasKeys(node, cs) {
			return
		}
		nodeLabels := node.GetMetadata().GetLabels()
		for i, c := range cs {
			if !nodeCounts(c, req, pod, node) {
				continue
			}
			counts[n*len(cs)+i] = count{value: nodeLabels[c.TopologyKey], n: countPodsMatchSelector(nodes[n], &cs[i], ns), ok: true}
		}
	})
	for k, c := range counts {
		if c.ok {
			s.TpValueToMatchNum[k%len(cs)][c.value] += c.n
		}
	}
	s.finish(pod)
	state.Write(preFilterStateKey, s)
	return nil, nil
}

// useIndex switches countFromIndex on; tests turn it off to compare.
var useIndex = true

// countFromIndex fills the counts from the snapshot's indexes instead of
// walking every node, when that gives the same answer: one constraint whose
// selector is a single key=value, node taints ignored, and no node affinity
// to honour. Domains are the values of the topology key over all nodes;
// counts come from the nodes whose pods carry the label.
func (pl *PodTopologySpread) countFromIndex(s *preFilterState, pod *corev1.Pod, numNodes int) bool {
	if len(s.Constraints) != 1 {
		return false
	}
	c := s.Constraints[0]
	hasAffinity := len(pod.GetSpec().GetNodeSelector()) > 0 || pod.GetSpec().GetAffinity().GetNodeAffinity().GetRequiredDuringSchedulingIgnoredDuringExecution() != nil
	if !c.onlyKey || c.NodeTaintsPolicy == PolicyHonor || (hasAffinity && c.NodeAffinityPolicy == PolicyHonor) {
		return false
	}
	lister := pl.handle.SnapshotSharedLister().NodeInfos()
	if len(lister.List()) != numNodes {
		return false // PreFilter was given a subset of the nodes
	}
	counts := s.TpValueToMatchNum[0]
	for v := range lister.TopologyValues(c.TopologyKey) {
		counts[v] = 0
	}
	for ni, n := range lister.PodLabelNodes(c.countKeys[0]) {
		if v, ok := ni.Node().GetMetadata().GetLabels()[c.TopologyKey]; ok {
			counts[v] += n
		}
	}
	s.finish(pod)
	return true
}

// finish computes the minimums and whether the pod matches its own selectors.
func (s *preFilterState) finish(pod *corev1.Pod) {
	s.updateMins()
	s.selfMatch = make([]int, len(s.Constraints))
	for i, c := range s.Constraints {
		if c.Selector.Matches(pod.GetMetadata().GetLabels()) {
			s.selfMatch[i] = 1
		}
	}
}

func (pl *PodTopologySpread) PreFilterExtensions() framework.PreFilterExtensions { return pl }

// AddPod counts a pod added to a node (preemption's what-if).
func (pl *PodTopologySpread) AddPod(_ context.Context, state *framework.CycleState, podToSchedule *corev1.Pod, podInfoToAdd *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	return pl.updateWithPod(state, podToSchedule, podInfoToAdd.Pod, nodeInfo, 1)
}

// RemovePod uncounts a pod removed from a node.
func (pl *PodTopologySpread) RemovePod(_ context.Context, state *framework.CycleState, podToSchedule *corev1.Pod, podInfoToRemove *framework.PodInfo, nodeInfo *framework.NodeInfo) *framework.Status {
	return pl.updateWithPod(state, podToSchedule, podInfoToRemove.Pod, nodeInfo, -1)
}

func (pl *PodTopologySpread) updateWithPod(state *framework.CycleState, podToSchedule, pod *corev1.Pod, nodeInfo *framework.NodeInfo, delta int) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return nil // PreFilter skipped
	}
	node := nodeInfo.Node()
	if node == nil || !nodeHasKeys(node, s.Constraints) || pod.GetMetadata().GetNamespace() != podToSchedule.GetMetadata().GetNamespace() {
		return nil
	}
	req := helper.GetRequiredNodeAffinity(podToSchedule)
	for i, c := range s.Constraints {
		if !nodeCounts(c, req, podToSchedule, node) || !c.Selector.Matches(pod.GetMetadata().GetLabels()) {
			continue
		}
		s.TpValueToMatchNum[i][node.GetMetadata().GetLabels()[c.TopologyKey]] += delta
	}
	s.updateMins()
	return nil
}

// Filter rejects a node whose domain would exceed maxSkew with the pod in it.
func (pl *PodTopologySpread) Filter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preFilterStateKey, err))
	}
	nodeLabels := nodeInfo.Node().GetMetadata().GetLabels()
	for i, c := range s.Constraints {
		value, ok := nodeLabels[c.TopologyKey]
		if !ok {
			return statusNodeLabelNotMatch
		}
		skew := s.TpValueToMatchNum[i][value] + s.selfMatch[i] - s.minMatch[i]
		if skew > int(c.MaxSkew) {
			return statusConstraintsNotMatch
		}
	}
	return nil
}

// Rejections are prebuilt: Filter runs in parallel for every node.
var (
	statusNodeLabelNotMatch   = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch).WithPlugin(Name)
	statusConstraintsNotMatch = framework.NewStatus(framework.Unschedulable, ErrReasonConstraintsNotMatch).WithPlugin(Name)
)
