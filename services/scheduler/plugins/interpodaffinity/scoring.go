package interpodaffinity

import (
	"context"
	"fmt"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

// scoreMap is the weight each domain earns: topology key → value → score.
type scoreMap map[string]map[string]int64

func (m scoreMap) processTerm(t *framework.AffinityTerm, weight int64, pod *corev1.Pod, node *corev1.Node, multiplier int64) {
	if !t.Matches(pod) {
		return
	}
	v, ok := node.GetMetadata().GetLabels()[t.TopologyKey]
	if !ok {
		return
	}
	if m[t.TopologyKey] == nil {
		m[t.TopologyKey] = map[string]int64{}
	}
	m[t.TopologyKey][v] += weight * multiplier
}

func (m scoreMap) processTerms(terms []framework.WeightedAffinityTerm, pod *corev1.Pod, node *corev1.Node, multiplier int64) {
	for i := range terms {
		m.processTerm(&terms[i].AffinityTerm, int64(terms[i].Weight), pod, node, multiplier)
	}
}

type preScoreState struct {
	topologyScore scoreMap
}

func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore sums, per domain, the weights of the preferred terms (the
// incoming pod's over existing pods, and existing pods' over the incoming
// pod) and of existing pods' required affinity terms the pod matches.
func (pl *InterPodAffinity) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, filtered []*framework.NodeInfo) *framework.Status {
	if len(filtered) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	pi := framework.NewPodInfo(pod)
	hasConstraints := len(pi.PreferredAffinityTerms) > 0 || len(pi.PreferredAntiAffinityTerms) > 0
	lister := pl.handle.SnapshotSharedLister().NodeInfos()
	nodes := lister.HavePodsWithAffinityList()
	if hasConstraints {
		nodes = lister.List()
	}
	if len(nodes) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	scores := scoreMap{}
	for _, ni := range nodes {
		node := ni.Node()
		if node == nil || len(node.GetMetadata().GetLabels()) == 0 {
			continue
		}
		existingPods := ni.PodsWithAffinity
		if hasConstraints {
			existingPods = ni.Pods
		}
		for _, existing := range existingPods {
			scores.processTerms(pi.PreferredAffinityTerms, existing.Pod, node, 1)
			scores.processTerms(pi.PreferredAntiAffinityTerms, existing.Pod, node, -1)
			if pl.hardPodAffinityWeight > 0 {
				for i := range existing.RequiredAffinityTerms {
					scores.processTerm(&existing.RequiredAffinityTerms[i], pl.hardPodAffinityWeight, pod, node, 1)
				}
			}
			scores.processTerms(existing.PreferredAffinityTerms, pod, node, 1)
			scores.processTerms(existing.PreferredAntiAffinityTerms, pod, node, -1)
		}
	}
	if len(scores) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	state.Write(preScoreStateKey, &preScoreState{topologyScore: scores})
	return nil
}

// Score is the sum of the node's domains' scores.
func (pl *InterPodAffinity) Score(_ context.Context, state *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := framework.ReadAs[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preScoreStateKey, err))
	}
	var score int64
	for key, values := range s.topologyScore {
		if v, ok := nodeInfo.Node().GetMetadata().GetLabels()[key]; ok {
			score += values[v]
		}
	}
	return score, nil
}

func (pl *InterPodAffinity) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps [min, max] to [0, 100] (scores may be negative before).
func (pl *InterPodAffinity) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	if len(scores) == 0 {
		return nil
	}
	lo, hi := scores[0].Score, scores[0].Score
	for _, s := range scores {
		lo, hi = min(lo, s.Score), max(hi, s.Score)
	}
	diff := hi - lo
	for i := range scores {
		var f float64
		if diff > 0 {
			f = float64(framework.MaxNodeScore) * float64(scores[i].Score-lo) / float64(diff)
		}
		scores[i].Score = int64(f)
	}
	return nil
}
