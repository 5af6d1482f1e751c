package testing

import (
	"context"

	"google.golang.org/grpc"

	"podline.dev/pkg/client/record"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/cache"
	"podline.dev/services/scheduler/internal/framework"
)

// NodeInfo builds the NodeInfo of node with pods on it.
func NodeInfo(node *corev1.Node, pods ...*corev1.Pod) *framework.NodeInfo {
	ni := framework.NewNodeInfo(pods...)
	ni.SetNode(node)
	return ni
}

// Snapshot places pods (by spec.nodeName) on nodes and snapshots them in
// the cache's zone-interleaved order.
func Snapshot(nodes []*corev1.Node, pods []*corev1.Pod) *cache.Snapshot {
	c := cache.New(nil)
	for _, n := range nodes {
		c.AddNode(n)
	}
	for _, p := range pods {
		c.AddPod(p)
	}
	s := cache.NewEmptySnapshot()
	c.UpdateSnapshot(s)
	return s
}

// Handle is a framework.Handle over a snapshot for plugin unit tests; the
// plugin runners run no plugins, and there is no apiserver.
type Handle struct {
	Snapshot  framework.SharedLister
	Recorder  record.EventRecorder
	Nominated map[string][]*framework.PodInfo
	Client    grpc.ClientConnInterface
}

var _ framework.Handle = (*Handle)(nil)

// NewHandle returns a Handle over s.
func NewHandle(s framework.SharedLister) *Handle {
	return &Handle{Snapshot: s, Recorder: record.NewFakeRecorder(100)}
}

func (h *Handle) SnapshotSharedLister() framework.SharedLister                  { return h.Snapshot }
func (h *Handle) Conn() grpc.ClientConnInterface                                { return h.Client }
func (h *Handle) EventRecorder() record.EventRecorder                           { return h.Recorder }
func (h *Handle) Parallelizer() framework.Parallelizer                          { return framework.NewParallelizer(2) }
func (h *Handle) ProfileName() string                                           { return "default-scheduler" }
func (h *Handle) GetWaitingPod(string) framework.WaitingPod                     { return nil }
func (h *Handle) RejectWaitingPod(string) bool                                  { return false }
func (h *Handle) IterateOverWaitingPods(func(framework.WaitingPod))             {}
func (h *Handle) AddNominatedPod(*framework.PodInfo, *framework.NominatingInfo) {}
func (h *Handle) DeleteNominatedPodIfExists(*corev1.Pod)                        {}
func (h *Handle) NominatedPodsForNode(n string) []*framework.PodInfo            { return h.Nominated[n] }
func (h *Handle) RunFilterPlugins(context.Context, *framework.CycleState, *corev1.Pod, *framework.NodeInfo) *framework.Status {
	return nil
}
func (h *Handle) RunFilterPluginsWithNominatedPods(context.Context, *framework.CycleState, *corev1.Pod, *framework.NodeInfo) *framework.Status {
	return nil
}
func (h *Handle) RunPreFilterExtensionAddPod(context.Context, *framework.CycleState, *corev1.Pod, *framework.PodInfo, *framework.NodeInfo) *framework.Status {
	return nil
}
func (h *Handle) RunPreFilterExtensionRemovePod(context.Context, *framework.CycleState, *corev1.Pod, *framework.PodInfo, *framework.NodeInfo) *framework.Status {
	return nil
}
