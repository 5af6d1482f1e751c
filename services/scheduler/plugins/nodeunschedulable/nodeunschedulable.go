// Package nodeunschedulable filters out nodes with spec.unschedulable
// (cordoned), unless the pod tolerates the node.kubernetes.io/unschedulable
// taint.
package nodeunschedulable

import (
	"context"
	"encoding/json"

	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/plugins/helper"
)

// Name is the plugin's name in profiles.
const Name = "NodeUnschedulable"

// Kubernetes' reasons.
const (
	ErrReasonUnschedulable    = "node(s) were unschedulable"
	ErrReasonUnknownCondition = "node(s) had unknown conditions"
)

// TaintNodeUnschedulable is the taint a cordoned node carries.
const TaintNodeUnschedulable = "node.kubernetes.io/unschedulable"

// NodeUnschedulable is the Filter plugin.
type NodeUnschedulable struct{}

var (
	_ framework.FilterPlugin      = (*NodeUnschedulable)(nil)
	_ framework.EnqueueExtensions = (*NodeUnschedulable)(nil)
)

// New builds the plugin.
func New(context.Context, json.RawMessage, framework.Handle) (framework.Plugin, error) {
	return &NodeUnschedulable{}, nil
}

func (*NodeUnschedulable) Name() string { return Name }

// EventsToRegister: a node added, or uncordoned.
func (*NodeUnschedulable) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{{
		Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add | framework.UpdateNodeTaint},
		QueueingHintFn: func(_ *corev1.Pod, _, newObj object.Object) (framework.QueueingHint, error) {
			if n, ok := newObj.(*corev1.Node); ok && !n.GetSpec().GetUnschedulable() {
				return framework.Queue, nil
			}
			return framework.QueueSkip, nil
		},
	}}, nil
}

// Filter rejects cordoned nodes.
func (*NodeUnschedulable) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	node := nodeInfo.Node()
	if node == nil {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnknownCondition)
	}
	if !node.GetSpec().GetUnschedulable() {
		return nil
	}
	taint := &corev1.Taint{Key: TaintNodeUnschedulable, Effect: helper.TaintEffectNoSchedule}
	if helper.TolerationsTolerateTaint(pod.GetSpec().GetTolerations(), taint) {
		return nil
	}
	return statusUnschedulable
}

var statusUnschedulable = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReasonUnschedulable).WithPlugin(Name)
