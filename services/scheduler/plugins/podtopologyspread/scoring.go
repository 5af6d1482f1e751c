package podtopologyspread

import (
	"context"
	"fmt"
	"math"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/plugins/helper"
)

const preScoreStateKey framework.StateKey = "PreScore" + Name

// invalidScore marks nodes that lack a constraint's key; they score 0.
const invalidScore = -1

type preScoreState struct {
	Constraints []constraint
	// IgnoredNodes lack one of the topology keys.
	IgnoredNodes map[string]bool
	// TopologyPairToPodCounts counts matching pods per (constraint, value), except hostname.
	TopologyPairToPodCounts []map[string]int64
	// TopologyNormalizingWeight is log(number of domains + 2) per constraint.
	TopologyNormalizingWeight []float64
}

func (s *preScoreState) Clone() framework.StateData { return s }

// PreScore counts matching pods per domain for the soft constraints.
func (pl *PodTopologySpread) PreScore(ctx context.Context, state *framework.CycleState, pod *corev1.Pod, filtered []*framework.NodeInfo) *framework.Status {
	cs, err := constraints(pod, ScheduleAnyway)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("obtaining pod's soft topology spread constraints: %w", err))
	}
	if len(cs) == 0 || len(filtered) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	s := &preScoreState{
		Constraints:               cs,
		IgnoredNodes:              map[string]bool{},
		TopologyPairToPodCounts:   make([]map[string]int64, len(cs)),
		TopologyNormalizingWeight: make([]float64, len(cs)),
	}
	for i := range cs {
		s.TopologyPairToPodCounts[i] = map[string]int64{}
	}
	// Domains come from the feasible nodes.
	counted := 0
	for _, ni := range filtered {
		node := ni.Node()
		if !nodeHasKeys(node, cs) {
			s.IgnoredNodes[ni.Name()] = true
			continue
		}
		counted++
		for i, c := range cs {
			if c.TopologyKey == labelHostname {
				continue
			}
			s.TopologyPairToPodCounts[i][node.GetMetadata().GetLabels()[c.TopologyKey]] = 0
		}
	}
	for i, c := range cs {
		size := len(s.TopologyPairToPodCounts[i])
		if c.TopologyKey == labelHostname {
			size = counted
		}
		s.TopologyNormalizingWeight[i] = math.Log(float64(size + 2))
	}
	// Pods are counted over every node that counts.
	all := pl.handle.SnapshotSharedLister().NodeInfos().List()
	req := helper.GetRequiredNodeAffinity(pod)
	ns := pod.GetMetadata().GetNamespace()
	perNode := make([][]int64, len(all))
	pl.parallelizer.Until(ctx, len(all), func(n int) {
		node := all[n].Node()
		if node == nil || !nodeHasKeys(node, cs) {
			return
		}
		counts := make([]int64, len(cs))
		for i, c := range cs {
			if c.TopologyKey == labelHostname || !nodeCounts(c, req, pod, node) {
				continue
			}
			if _, ok := s.TopologyPairToPodCounts[i][node.GetMetadata().GetLabels()[c.TopologyKey]]; !ok {
				continue
			}
			counts[i] = int64(countPodsMatchSelector(all[n], &cs[i], ns))
		}
		perNode[n] = counts
	})
	for n, counts := range perNode {
		for i, cnt := range counts {
			if cnt > 0 {
				s.TopologyPairToPodCounts[i][all[n].Node().GetMetadata().GetLabels()[cs[i].TopologyKey]] += cnt
			}
		}
	}
	state.Write(preScoreStateKey, s)
	return nil
}

// Score is Σ count(domain) × weight + (maxSkew − 1): lower is better.
func (pl *PodTopologySpread) Score(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	s, err := framework.ReadAs[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preScoreStateKey, err))
	}
	if s.IgnoredNodes[nodeInfo.Name()] {
		return 0, nil
	}
	var score float64
	nodeLabels := nodeInfo.Node().GetMetadata().GetLabels()
	for i, c := range s.Constraints {
		value, ok := nodeLabels[c.TopologyKey]
		if !ok {
			continue
		}
		var cnt int64
		if c.TopologyKey == labelHostname {
			cnt = int64(countPodsMatchSelector(nodeInfo, &s.Constraints[i], pod.GetMetadata().GetNamespace()))
		} else {
			cnt = s.TopologyPairToPodCounts[i][value]
		}
		score += float64(cnt)*s.TopologyNormalizingWeight[i] + float64(c.MaxSkew-1)
	}
	return int64(math.Round(score)), nil
}

func (pl *PodTopologySpread) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore maps the lowest count to 100 and the highest to the ratio below it.
func (pl *PodTopologySpread) NormalizeScore(_ context.Context, state *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	s, err := framework.ReadAs[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return framework.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preScoreStateKey, err))
	}
	var minScore int64 = math.MaxInt64
	var maxScore int64
	for i, sc := range scores {
		if s.IgnoredNodes[sc.Name] {
			scores[i].Score = invalidScore
			continue
		}
		minScore = min(minScore, sc.Score)
		maxScore = max(maxScore, sc.Score)
	}
	for i := range scores {
		if scores[i].Score == invalidScore {
			scores[i].Score = 0
			continue
		}
		if maxScore == 0 {
			scores[i].Score = framework.MaxNodeScore
			continue
		}
		scores[i].Score = framework.MaxNodeScore * (maxScore + minScore - scores[i].Score) / maxScore
	}
	return nil
}
