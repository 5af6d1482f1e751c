package framework

import (
	"context"
	"maps"
	"slices"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
)

// EventResource is the kind of object a cluster event is about.
type EventResource string

const (
	// Node events.
	Node EventResource = "Node"
	// AssignedPod events are about pods bound to a node.
	AssignedPod EventResource = "AssignedPod"
	// UnschedulablePod marks the pool's periodic flush and forced moves.
	UnschedulablePod EventResource = "UnschedulablePod"
	// WildCard matches every resource.
	WildCard EventResource = "*"
)

// ActionType is a set of changes, as bit flags.
type ActionType int64

const (
	Add ActionType = 1 << iota
	Delete
	UpdateNodeAllocatable
	UpdateNodeLabel
	UpdateNodeTaint
	UpdateNodeCondition
	UpdateNodeAnnotation
	UpdatePodLabel
	UpdatePodScaleDown

	// Update is any update.
	Update = UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdateNodeCondition | UpdateNodeAnnotation | UpdatePodLabel | UpdatePodScaleDown
	// All is any action.
	All ActionType = 1<<iota - 1
)

// ClusterEvent is a change in the cluster that may make pods schedulable.
type ClusterEvent struct {
	Resource   EventResource
	ActionType ActionType
	// Label names the event in logs and metrics.
	Label string
}

// Match reports whether e (a registered interest) covers the event got.
func (e ClusterEvent) Match(got ClusterEvent) bool {
	return (e.Resource == WildCard || got.Resource == WildCard || e.Resource == got.Resource) && e.ActionType&got.ActionType != 0
}

// Events the scheduler itself raises.
var (
	EventNodeAdd           = ClusterEvent{Resource: Node, ActionType: Add, Label: "NodeAdd"}
	EventAssignedPodAdd    = ClusterEvent{Resource: AssignedPod, ActionType: Add, Label: "AssignedPodAdd"}
	EventAssignedPodUpdate = ClusterEvent{Resource: AssignedPod, ActionType: UpdatePodLabel | UpdatePodScaleDown, Label: "AssignedPodUpdate"}
	EventAssignedPodDelete = ClusterEvent{Resource: AssignedPod, ActionType: Delete, Label: "AssignedPodDelete"}
	// EventUnschedulableTimeout is the periodic flush of pods that stayed
	// unschedulable for too long: it moves them whatever their plugins registered.
	EventUnschedulableTimeout = ClusterEvent{Resource: WildCard, ActionType: All, Label: "UnschedulableTimeout"}
	// EventForceActivate moves every pod (tests, and after a binding failure of unknown cause).
	EventForceActivate = ClusterEvent{Resource: WildCard, ActionType: All, Label: "ForceActivate"}
)

// QueueingHint is a plugin's answer to "may this event make the pod schedulable?".
type QueueingHint int

const (
	// QueueSkip: the event cannot help the pod.
	QueueSkip QueueingHint = iota
	// Queue: the event may help; retry the pod.
	Queue
)

// QueueingHintFn decides for one pod and one event (old and new objects; old nil on Add, new nil on Delete).
type QueueingHintFn func(pod *corev1.Pod, oldObj, newObj object.Object) (QueueingHint, error)

// ClusterEventWithHint is an event a plugin cares about, with an optional hint.
type ClusterEventWithHint struct {
	Event ClusterEvent
	// QueueingHintFn may be nil: every matching event queues the pod.
	QueueingHintFn QueueingHintFn
}

// EnqueueExtensions is implemented by plugins that can reject pods: it
// names the events after which a pod they rejected may fit.
type EnqueueExtensions interface {
	Plugin
	EventsToRegister(ctx context.Context) ([]ClusterEventWithHint, error)
}

// NodeUpdateEvent is the event of a node's change from oldNode to newNode
// (ActionType 0 when nothing that matters to scheduling changed).
func NodeUpdateEvent(oldNode, newNode *corev1.Node) ClusterEvent {
	var a ActionType
	if !maps.Equal(oldNode.GetStatus().GetAllocatable(), newNode.GetStatus().GetAllocatable()) {
		a |= UpdateNodeAllocatable
	}
	if !maps.Equal(oldNode.GetMetadata().GetLabels(), newNode.GetMetadata().GetLabels()) {
		a |= UpdateNodeLabel
	}
	if oldNode.GetSpec().GetUnschedulable() != newNode.GetSpec().GetUnschedulable() ||
		!slices.EqualFunc(oldNode.GetSpec().GetTaints(), newNode.GetSpec().GetTaints(), sameTaint) {
		a |= UpdateNodeTaint
	}
	if !slices.EqualFunc(oldNode.GetStatus().GetConditions(), newNode.GetStatus().GetConditions(), func(a, b *corev1.NodeCondition) bool {
		return a.GetType() == b.GetType() && a.GetStatus() == b.GetStatus()
	}) {
		a |= UpdateNodeCondition
	}
	if !maps.Equal(oldNode.GetMetadata().GetAnnotations(), newNode.GetMetadata().GetAnnotations()) {
		a |= UpdateNodeAnnotation
	}
	if !slices.EqualFunc(oldNode.GetStatus().GetImages(), newNode.GetStatus().GetImages(), func(a, b *corev1.ContainerImage) bool { return proto.Equal(a, b) }) {
		a |= UpdateNodeAllocatable // images change what ImageLocality scores; treat like allocatable
	}
	return ClusterEvent{Resource: Node, ActionType: a, Label: "NodeUpdate"}
}

func sameTaint(a, b *corev1.Taint) bool {
	return a.GetKey() == b.GetKey() && a.GetValue() == b.GetValue() && a.GetEffect() == b.GetEffect()
}

// AssignedPodUpdateEvent is the event of an assigned pod's change.
func AssignedPodUpdateEvent(oldPod, newPod *corev1.Pod) ClusterEvent {
	var a ActionType
	if !maps.Equal(oldPod.GetMetadata().GetLabels(), newPod.GetMetadata().GetLabels()) {
		a |= UpdatePodLabel
	}
	o, _ := PodRequests(oldPod, false)
	n, _ := PodRequests(newPod, false)
	if n.MilliCPU < o.MilliCPU || n.Memory < o.Memory || n.EphemeralStorage < o.EphemeralStorage {
		a |= UpdatePodScaleDown
	}
	// A pod that finished (or started terminating) frees what it held in practice.
	if oldPod.GetStatus().GetPhase() != newPod.GetStatus().GetPhase() {
		a |= UpdatePodScaleDown
	}
	return ClusterEvent{Resource: AssignedPod, ActionType: a, Label: "AssignedPodUpdate"}
}
