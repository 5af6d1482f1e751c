package queue

import (
	"sync"
	"sync/atomic"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
)

// nominator remembers the pods nominated to nodes.
type nominator struct {
	// count lets the common case (no nominations) skip the lock: Filter asks once per node.
	count  atomic.Int64
	mu     sync.RWMutex
	byNode map[string][]*framework.PodInfo
	byPod  map[string]string // pod key -> node
}

var _ framework.PodNominator = (*nominator)(nil)

func newNominator() *nominator {
	return &nominator{byNode: map[string][]*framework.PodInfo{}, byPod: map[string]string{}}
}

// AddNominatedPod records pi as nominated to the node in info, or to its
// status.nominatedNodeName when info does not override it.
func (n *nominator) AddNominatedPod(pi *framework.PodInfo, info *framework.NominatingInfo) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(pi.Pod)
	node := pi.Pod.GetStatus().GetNominatedNodeName()
	if info != nil && info.NominatingMode == framework.ModeOverride {
		node = info.NominatedNodeName
	}
	if node == "" || pi.Pod.GetSpec().GetNodeName() != "" {
		return
	}
	n.byPod[framework.PodKey(pi.Pod)] = node
	n.byNode[node] = append(n.byNode[node], pi)
	n.count.Add(1)
}

func (n *nominator) DeleteNominatedPodIfExists(pod *corev1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(pod)
}

func (n *nominator) deleteLocked(pod *corev1.Pod) {
	key := framework.PodKey(pod)
	node, ok := n.byPod[key]
	if !ok {
		return
	}
	delete(n.byPod, key)
	n.count.Add(-1)
	list := n.byNode[node]
	for i, pi := range list {
		if framework.PodKey(pi.Pod) == key {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(n.byNode, node)
	} else {
		n.byNode[node] = list
	}
}

// updateNominatedPod keeps a nomination across a pod update unless the
// update carries a different nominatedNodeName.
func (n *nominator) updateNominatedPod(oldPod *corev1.Pod, newInfo *framework.PodInfo) {
	n.mu.Lock()
	node, had := n.byPod[framework.PodKey(oldPod)]
	n.mu.Unlock()
	var info *framework.NominatingInfo
	if had && newInfo.Pod.GetStatus().GetNominatedNodeName() == "" {
		info = &framework.NominatingInfo{NominatedNodeName: node, NominatingMode: framework.ModeOverride}
	}
	n.AddNominatedPod(newInfo, info)
}

func (n *nominator) NominatedPodsForNode(node string) []*framework.PodInfo {
	if n.count.Load() == 0 {
		return nil
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	list := n.byNode[node]
	if len(list) == 0 {
		return nil
	}
	return append([]*framework.PodInfo(nil), list...)
}
