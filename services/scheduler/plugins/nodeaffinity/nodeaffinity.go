// Package nodeaffinity filters nodes by a pod's spec.nodeSelector and
// required node affinity, and scores them by its preferred node affinity
// (the sum of the weights of the terms a node matches, scaled to 0-100).
package nodeaffinity

import (
	"context"
	"encoding/json"
	"fmt"

	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/plugins/helper"
)

// Name is the plugin's name in profiles.
const Name = "NodeAffinity"

// ErrReasonPod is Kubernetes' reason.
const ErrReasonPod = "node(s) didn't match Pod's node affinity/selector"

const (
	preFilterStateKey framework.StateKey = "PreFilter" + Name
	preScoreStateKey  framework.StateKey = "PreScore" + Name
)

// NodeAffinity is the PreFilter, Filter, PreScore and Score plugin.
type NodeAffinity struct{}

var (
	_ framework.PreFilterPlugin   = (*NodeAffinity)(nil)
	_ framework.FilterPlugin      = (*NodeAffinity)(nil)
	_ framework.PreScorePlugin    = (*NodeAffinity)(nil)
	_ framework.ScorePlugin       = (*NodeAffinity)(nil)
	_ framework.EnqueueExtensions = (*NodeAffinity)(nil)
)

// New builds the plugin.
func New(context.Context, json.RawMessage, framework.Handle) (framework.Plugin, error) {
	return &NodeAffinity{}, nil
}

func (*NodeAffinity) Name() string { return Name }

// EventsToRegister: a node added or relabelled so that it now matches.
func (*NodeAffinity) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{{
		Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeLabel},
		QueueingHintFn: func(pod *corev1.Pod, oldObj, newObj object.Object) (framework.QueueingHint, error) {
			newNode, ok := newObj.(*corev1.Node)
			if !ok {
				return framework.QueueSkip, nil
			}
			req := helper.GetRequiredNodeAffinity(pod)
			if !req.Match(newNode) {
				return framework.QueueSkip, nil
			}
			if oldNode, ok := oldObj.(*corev1.Node); ok && oldNode != nil && req.Match(oldNode) {
				return framework.QueueSkip, nil // it matched before: labels did not make the difference
			}
			return framework.Queue, nil
		},
	}}, nil
}

type preFilterState struct{ req helper.RequiredNodeAffinity }

func (s *preFilterState) Clone() framework.StateData { return s }

// PreFilter parses the pod's constraints once; a pod with none skips Filter.
func (*NodeAffinity) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	if len(pod.GetSpec().GetNodeSelector()) == 0 && pod.GetSpec().GetAffinity().GetNodeAffinity().GetRequiredDuringSchedulingIgnoredDuringExecution() == nil {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(preFilterStateKey, &preFilterState{req: helper.GetRequiredNodeAffinity(pod)})
	return nil, nil
}

func (*NodeAffinity) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter rejects a node the pod's selector or required affinity does not match.
func (*NodeAffinity) Filter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	s, err := framework.ReadAs[*preFilterState](state, preFilterStateKey)
	req := helper.GetRequiredNodeAffinity(pod)
	if err == nil {
		req = s.req
	}
	if !req.Match(nodeInfo.Node()) {
		return statusNotMatch
	}
	return nil
}

type preferredTerm struct {
	term   helper.NodeSelectorTerm
	weight int64
}

type preScoreState []preferredTerm

func (s preScoreState) Clone() framework.StateData { return s }

// PreScore parses the preferred terms; a pod with none skips Score.
func (*NodeAffinity) PreScore(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) *framework.Status {
	prefs := pod.GetSpec().GetAffinity().GetNodeAffinity().GetPreferredDuringSchedulingIgnoredDuringExecution()
	if len(prefs) == 0 {
		return framework.NewStatus(framework.Skip)
	}
	var terms preScoreState
	for _, p := range prefs {
		if p.GetWeight() == 0 {
			continue
		}
		terms = append(terms, preferredTerm{term: helper.NewNodeSelectorTerm(p.GetPreference()), weight: int64(p.GetWeight())})
	}
	state.Write(preScoreStateKey, terms)
	return nil
}

// Score sums the weights of the preferred terms the node matches.
func (*NodeAffinity) Score(_ context.Context, state *framework.CycleState, _ *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	terms, err := framework.ReadAs[preScoreState](state, preScoreStateKey)
	if err != nil {
		return 0, framework.AsStatus(fmt.Errorf("reading %q from cycleState: %w", preScoreStateKey, err))
	}
	var score int64
	for _, t := range terms {
		if t.term.Match(nodeInfo.Node()) {
			score += t.weight
		}
	}
	return score, nil
}

func (pl *NodeAffinity) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore scales to 0-100 by the best node.
func (*NodeAffinity) NormalizeScore(_ context.Context, _ *framework.CycleState, _ *corev1.Pod, scores framework.NodeScoreList) *framework.Status {
	return helper.DefaultNormalizeScore(framework.MaxNodeScore, false, scores)
}

var statusNotMatch = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonPod).WithPlugin(Name)
