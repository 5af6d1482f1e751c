// Package nodename filters out every node but the one a pod names in
// spec.nodeName (a pod that names one is normally never scheduled, but a
// profile may be asked to check it).
package nodename

import (
	"context"
	"encoding/json"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
)

// Name is the plugin's name in profiles.
const Name = "NodeName"

// ErrReason is Kubernetes' reason.
const ErrReason = "node(s) didn't match the requested node name"

// NodeName is the Filter plugin.
type NodeName struct{}

var (
	_ framework.FilterPlugin      = (*NodeName)(nil)
	_ framework.EnqueueExtensions = (*NodeName)(nil)
)

// New builds the plugin.
func New(context.Context, json.RawMessage, framework.Handle) (framework.Plugin, error) {
	return &NodeName{}, nil
}

func (*NodeName) Name() string { return Name }

// EventsToRegister: only a new node can be the named one.
func (*NodeName) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}}}, nil
}

// Filter rejects nodes other than the named one.
func (*NodeName) Filter(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	if n := pod.GetSpec().GetNodeName(); n != "" && n != nodeInfo.Name() {
		return statusNotMatch
	}
	return nil
}

var statusNotMatch = framework.NewStatus(framework.UnschedulableAndUnresolvable, ErrReason).WithPlugin(Name)
