// Package interpodaffinity places pods relative to other pods: required
// pod affinity (only nodes in a topology domain holding matching pods),
// required anti-affinity (no node in a domain holding matching pods, and
// the symmetric rule for existing pods' anti-affinity), and the preferred
// forms as scores, as Kubernetes' InterPodAffinity does.
package interpodaffinity

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/internal/framework/runtime"
)

// Name is the plugin's name in profiles.
const Name = "InterPodAffinity"

// Kubernetes' reasons.
const (
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	ErrReasonAffinityRulesNotMatch             = "node(s) didn't match pod affinity rules"
	ErrReasonAntiAffinityRulesNotMatch         = "node(s) didn't match pod anti-affinity rules"
)

// Args are the plugin's pluginConfig args.
type Args struct {
	// HardPodAffinityWeight is the score weight of existing pods' required
	// affinity terms that the incoming pod matches (default 1).
	HardPodAffinityWeight *int32 `json:"hardPodAffinityWeight,omitempty"`
}

// InterPodAffinity is the PreFilter, Filter, PreScore and Score plugin.
type InterPodAffinity struct {
	handle                framework.Handle
	hardPodAffinityWeight int64
}

var (
	_ framework.PreFilterPlugin     = (*InterPodAffinity)(nil)
	_ framework.PreFilterExtensions = (*InterPodAffinity)(nil)
	_ framework.FilterPlugin        = (*InterPodAffinity)(nil)
	_ framework.PreScorePlugin      = (*InterPodAffinity)(nil)
	_ framework.ScorePlugin         = (*InterPodAffinity)(nil)
	_ framework.EnqueueExtensions   = (*InterPodAffinity)(nil)
)

// New builds the plugin.
func New(_ context.Context, raw json.RawMessage, h framework.Handle) (framework.Plugin, error) {
	var args Args
	if err := runtime.DecodeArgs(raw, &args); err != nil {
		return nil, fmt.Errorf("%s args: %w", Name, err)
	}
	w := int64(1)
	if args.HardPodAffinityWeight != nil {
		w = int64(*args.HardPodAffinityWeight)
	}
	if w < 0 || w > 100 {
		return nil, fmt.Errorf("%s args: hardPodAffinityWeight %d is not in [0, 100]", Name, w)
	}
	return &InterPodAffinity{handle: h, hardPodAffinityWeight: w}, nil
}

func (*InterPodAffinity) Name() string { return Name }

// EventsToRegister: pods come, go or change labels; nodes come or change labels.
func (*InterPodAffinity) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add | framework.Delete | framework.UpdatePodLabel}},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel}},
	}, nil
}

// topologyPair is one domain: a topology key and its value.
type topologyPair struct{ key, value string }

// topologyToMatchedTermCount counts matching pods per domain.
type topologyToMatchedTermCount map[topologyPair]int64

func (m topologyToMatchedTermCount) clone() topologyToMatchedTermCount {
	out := make(topologyToMatchedTermCount, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (m topologyToMatchedTermCount) update(node *corev1.Node, key string, delta int64) {
	if v, ok := node.GetMetadata().GetLabels()[key]; ok {
		p := topologyPair{key, v}
		m[p] += delta
		if m[p] == 0 {
			delete(m, p)
		}
	}
}

// updateWithAffinityTerms counts pod in every term's domain when it matches all terms.
func (m topologyToMatchedTermCount) updateWithAffinityTerms(terms []framework.AffinityTerm, pod *corev1.Pod, node *corev1.Node, delta int64) {
	if matchesAll(terms, pod) {
		for _, t := range terms {
			m.update(node, t.TopologyKey, delta)
		}
	}
}

// updateWithAntiAffinityTerms counts pod in the domain of each term it matches.
func (m topologyToMatchedTermCount) updateWithAntiAffinityTerms(terms []framework.AffinityTerm, pod *corev1.Pod, node *corev1.Node, delta int64) {
	for i := range terms {
		if terms[i].Matches(pod) {
			m.update(node, terms[i].TopologyKey, delta)
		}
	}
}

func matchesAll(terms []framework.AffinityTerm, pod *corev1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(pod) {
			return false
		}
	}
	return true
}
