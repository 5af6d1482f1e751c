package framework

import (
	"context"
	"math"
	"time"

	"google.golang.org/grpc"

	"podline.dev/pkg/client/record"
	corev1 "podline.dev/proto/core/v1"
)

// Score bounds, as in Kubernetes.
const (
	MaxNodeScore  int64 = 100
	MinNodeScore  int64 = 0
	MaxTotalScore int64 = math.MaxInt64
)

// Plugin is any scheduling plugin.
type Plugin interface {
	Name() string
}

// PreEnqueuePlugin decides whether a pod may enter the active queue at all
// (scheduling gates); Pending keeps it out until it changes.
type PreEnqueuePlugin interface {
	Plugin
	PreEnqueue(ctx context.Context, pod *corev1.Pod) *Status
}

// QueueSortPlugin orders the active queue; a profile has exactly one.
type QueueSortPlugin interface {
	Plugin
	Less(a, b *QueuedPodInfo) bool
}

// PreFilterResult narrows the nodes Filter runs on; nil NodeNames means all.
type PreFilterResult struct {
	NodeNames map[string]bool
}

// AllNodes reports whether the result keeps every node.
func (r *PreFilterResult) AllNodes() bool { return r == nil || r.NodeNames == nil }

// Merge intersects two results.
func (r *PreFilterResult) Merge(o *PreFilterResult) *PreFilterResult {
	if r.AllNodes() {
		return o
	}
	if o.AllNodes() {
		return r
	}
	out := &PreFilterResult{NodeNames: map[string]bool{}}
	for n := range r.NodeNames {
		if o.NodeNames[n] {
			out.NodeNames[n] = true
		}
	}
	return out
}

// PreFilterExtensions let preemption add and remove pods from a node while
// keeping a plugin's PreFilter state right.
type PreFilterExtensions interface {
	AddPod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RemovePod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
}

// PreFilterPlugin computes per-pod state once before Filter.
type PreFilterPlugin interface {
	Plugin
	PreFilter(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) (*PreFilterResult, *Status)
	// PreFilterExtensions may be nil.
	PreFilterExtensions() PreFilterExtensions
}

// FilterPlugin says whether the pod fits one node. It runs in parallel over nodes.
type FilterPlugin interface {
	Plugin
	Filter(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) *Status
}

// NominatingMode says whether PostFilter's nominated node replaces the pod's.
type NominatingMode int

const (
	ModeNoop NominatingMode = iota
	ModeOverride
)

// NominatingInfo is a nomination decided by PostFilter.
type NominatingInfo struct {
	NominatedNodeName string
	NominatingMode    NominatingMode
}

// PostFilterResult carries a nomination.
type PostFilterResult struct {
	*NominatingInfo
}

// PostFilterPlugin runs when no node fits (preemption).
type PostFilterPlugin interface {
	Plugin
	PostFilter(ctx context.Context, state *CycleState, pod *corev1.Pod, filteredNodeStatusMap NodeToStatus) (*PostFilterResult, *Status)
}

// PreScorePlugin computes per-pod state once before Score.
type PreScorePlugin interface {
	Plugin
	PreScore(ctx context.Context, state *CycleState, pod *corev1.Pod, nodes []*NodeInfo) *Status
}

// NodeScore is a node's score from one plugin or in total.
type NodeScore struct {
	Name  string
	Score int64
}

// NodeScoreList is the scores of every feasible node.
type NodeScoreList []NodeScore

// ScoreExtensions normalize a plugin's scores to [MinNodeScore, MaxNodeScore].
type ScoreExtensions interface {
	NormalizeScore(ctx context.Context, state *CycleState, pod *corev1.Pod, scores NodeScoreList) *Status
}

// ScorePlugin ranks feasible nodes; it runs in parallel over nodes.
type ScorePlugin interface {
	Plugin
	Score(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) (int64, *Status)
	// ScoreExtensions may be nil.
	ScoreExtensions() ScoreExtensions
}

// ReservePlugin is told when a node is chosen (Reserve) and when the choice
// is undone (Unreserve, which must be idempotent).
type ReservePlugin interface {
	Plugin
	Reserve(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status
	Unreserve(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string)
}

// PermitPlugin approves, rejects or holds (Wait, up to the duration) a pod before binding.
type PermitPlugin interface {
	Plugin
	Permit(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) (*Status, time.Duration)
}

// PreBindPlugin runs before binding.
type PreBindPlugin interface {
	Plugin
	PreBind(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status
}

// BindPlugin binds the pod; Skip passes to the next binder.
type BindPlugin interface {
	Plugin
	Bind(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string) *Status
}

// PostBindPlugin is told after a successful bind.
type PostBindPlugin interface {
	Plugin
	PostBind(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeName string)
}

// PodNominator keeps the pods nominated to nodes by preemption, so that
// filtering a node counts the higher-priority pods waiting for it.
type PodNominator interface {
	AddNominatedPod(pi *PodInfo, info *NominatingInfo)
	DeleteNominatedPodIfExists(pod *corev1.Pod)
	NominatedPodsForNode(nodeName string) []*PodInfo
}

// WaitingPod is a pod held by Permit.
type WaitingPod interface {
	GetPod() *corev1.Pod
	// Allow lets the pod go on, once every plugin that made it wait has allowed it.
	Allow(pluginName string)
	// Reject fails the pod's binding cycle.
	Reject(pluginName, msg string)
}

// PluginsRunner runs a profile's plugins; preemption uses it to try a pod
// on a node with some pods removed.
type PluginsRunner interface {
	RunFilterPlugins(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) *Status
	RunFilterPluginsWithNominatedPods(ctx context.Context, state *CycleState, pod *corev1.Pod, nodeInfo *NodeInfo) *Status
	RunPreFilterExtensionAddPod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	RunPreFilterExtensionRemovePod(ctx context.Context, state *CycleState, podToSchedule *corev1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
}

// Handle is what plugins get from the framework.
type Handle interface {
	PluginsRunner
	PodNominator
	// SnapshotSharedLister is this cycle's snapshot of the node cache.
	SnapshotSharedLister() SharedLister
	// Conn reaches the apiserver (binder, preemption).
	Conn() grpc.ClientConnInterface
	EventRecorder() record.EventRecorder
	Parallelizer() Parallelizer
	// ProfileName is the schedulerName this profile serves.
	ProfileName() string
	GetWaitingPod(uid string) WaitingPod
	RejectWaitingPod(uid string) bool
	IterateOverWaitingPods(fn func(WaitingPod))
}
