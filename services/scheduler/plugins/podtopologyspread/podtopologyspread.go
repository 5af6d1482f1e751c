// Package podtopologyspread spreads pods that match a selector evenly over
// topology domains (zones, hosts): with whenUnsatisfiable DoNotSchedule it
// filters out nodes whose domain would then hold more than maxSkew pods
// above the emptiest domain; with ScheduleAnyway it scores emptier domains
// higher. minDomains, matchLabelKeys and the node affinity/taints policies
// follow Kubernetes.
package podtopologyspread

import (
	"context"
	"encoding/json"
	"sync"

	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
)

// Name is the plugin's name in profiles.
const Name = "PodTopologySpread"

// Kubernetes' reasons.
const (
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	ErrReasonNodeLabelNotMatch   = ErrReasonConstraintsNotMatch + " (missing required label)"
)

// PodTopologySpread is the PreFilter, Filter, PreScore and Score plugin.
type PodTopologySpread struct {
	handle       framework.Handle
	parallelizer framework.Parallelizer
	// scratch is PreFilter's per-node counts, reused between cycles.
	scratchMu sync.Mutex
	scratch   []count
}

var (
	_ framework.PreFilterPlugin     = (*PodTopologySpread)(nil)
	_ framework.PreFilterExtensions = (*PodTopologySpread)(nil)
	_ framework.FilterPlugin        = (*PodTopologySpread)(nil)
	_ framework.PreScorePlugin      = (*PodTopologySpread)(nil)
	_ framework.ScorePlugin         = (*PodTopologySpread)(nil)
	_ framework.EnqueueExtensions   = (*PodTopologySpread)(nil)
)

// New builds the plugin.
func New(_ context.Context, _ json.RawMessage, h framework.Handle) (framework.Plugin, error) {
	return &PodTopologySpread{handle: h, parallelizer: h.Parallelizer()}, nil
}

func (*PodTopologySpread) Name() string { return Name }

// EventsToRegister: pods matching a constraint come or go, or nodes with the keys change.
func (*PodTopologySpread) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Add | framework.Delete | framework.UpdatePodLabel},
			QueueingHintFn: func(pod *corev1.Pod, oldObj, newObj object.Object) (framework.QueueingHint, error) {
				cs, err := constraints(pod, DoNotSchedule)
				if err != nil {
					return framework.Queue, err
				}
				for _, o := range []object.Object{oldObj, newObj} {
					p, ok := o.(*corev1.Pod)
					if !ok || p == nil || p.GetMetadata().GetNamespace() != pod.GetMetadata().GetNamespace() {
						continue
					}
					for _, c := range cs {
						if c.Selector.Matches(p.GetMetadata().GetLabels()) {
							return framework.Queue, nil
						}
					}
				}
				return framework.QueueSkip, nil
			}},
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.Delete | framework.UpdateNodeLabel | framework.UpdateNodeTaint},
			QueueingHintFn: func(pod *corev1.Pod, oldObj, newObj object.Object) (framework.QueueingHint, error) {
				cs, err := constraints(pod, DoNotSchedule)
				if err != nil {
					return framework.Queue, err
				}
				for _, o := range []object.Object{oldObj, newObj} {
					if n, ok := o.(*corev1.Node); ok && n != nil && nodeHasKeys(n, cs) {
						return framework.Queue, nil
					}
				}
				return framework.QueueSkip, nil
			}},
	}, nil
}
