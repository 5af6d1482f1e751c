// Package nodeports filters out nodes where a host port the pod asks for
// is already taken (same protocol and port on the same IP, or on 0.0.0.0).
package nodeports

import (
	"context"
	"encoding/json"

	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
)

// Name is the plugin's name in profiles.
const Name = "NodePorts"

// ErrReason is Kubernetes' reason.
const ErrReason = "node(s) didn't have free ports for the requested pod ports"

const stateKey framework.StateKey = "PreFilter" + Name

// NodePorts is the PreFilter and Filter plugin.
type NodePorts struct{}

var (
	_ framework.PreFilterPlugin   = (*NodePorts)(nil)
	_ framework.FilterPlugin      = (*NodePorts)(nil)
	_ framework.EnqueueExtensions = (*NodePorts)(nil)
)

// New builds the plugin.
func New(context.Context, json.RawMessage, framework.Handle) (framework.Plugin, error) {
	return &NodePorts{}, nil
}

func (*NodePorts) Name() string { return Name }

type preFilterState []*corev1.ContainerPort

func (s preFilterState) Clone() framework.StateData { return s }

// HostPorts are the container ports of pod that use a host port.
func HostPorts(pod *corev1.Pod) []*corev1.ContainerPort {
	var out []*corev1.ContainerPort
	for _, c := range pod.GetSpec().GetContainers() {
		for _, p := range c.GetPorts() {
			if p.GetHostPort() > 0 {
				out = append(out, p)
			}
		}
	}
	return out
}

// PreFilter collects the pod's host ports; a pod without any skips Filter.
func (*NodePorts) PreFilter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, _ []*framework.NodeInfo) (*framework.PreFilterResult, *framework.Status) {
	ports := HostPorts(pod)
	if len(ports) == 0 {
		return nil, framework.NewStatus(framework.Skip)
	}
	state.Write(stateKey, preFilterState(ports))
	return nil, nil
}

func (*NodePorts) PreFilterExtensions() framework.PreFilterExtensions { return nil }

// Filter rejects a node where one of the ports is taken.
func (*NodePorts) Filter(_ context.Context, state *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) *framework.Status {
	ports, err := framework.ReadAs[preFilterState](state, stateKey)
	if err != nil {
		ports = HostPorts(pod)
	}
	if !Fits(ports, nodeInfo) {
		return statusConflict
	}
	return nil
}

// Fits reports whether every port is free on the node.
func Fits(ports []*corev1.ContainerPort, nodeInfo *framework.NodeInfo) bool {
	for _, p := range ports {
		if nodeInfo.UsedPorts.CheckConflict(p.GetHostIp(), p.GetProtocol(), p.GetHostPort()) {
			return false
		}
	}
	return true
}

// EventsToRegister: a node added, or a pod with host ports deleted.
func (*NodePorts) EventsToRegister(context.Context) ([]framework.ClusterEventWithHint, error) {
	return []framework.ClusterEventWithHint{
		{Event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.Add}},
		{Event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.Delete},
			QueueingHintFn: func(pod *corev1.Pod, oldObj, _ object.Object) (framework.QueueingHint, error) {
				deleted, ok := oldObj.(*corev1.Pod)
				if !ok {
					return framework.Queue, nil
				}
				for _, want := range HostPorts(pod) {
					for _, had := range HostPorts(deleted) {
						if want.GetHostPort() == had.GetHostPort() {
							return framework.Queue, nil
						}
					}
				}
				return framework.QueueSkip, nil
			}},
	}, nil
}

var statusConflict = framework.NewStatus(framework.Unschedulable, ErrReason).WithPlugin(Name)
