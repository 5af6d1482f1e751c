package cache

import (
	"fmt"
	"log/slog"
	"maps"
	"sync"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
)

// Cache holds nodes and the pods on them. It is safe for concurrent use.
type Cache struct {
	mu sync.RWMutex
	// nodes holds every node known, and nodes only known through their
	// pods (NodeInfo.Node() == nil) until the node arrives.
	nodes map[string]*framework.NodeInfo
	tree  *nodeTree
	// pods holds every pod placed on a node, by framework.PodKey.
	pods map[string]*podState
	// images counts the nodes that have each image.
	images map[string]*imageState
	// treeChanged is set when the set or order of nodes changed.
	treeChanged bool
	// dirty names the nodes changed since the last UpdateSnapshot.
	dirty map[string]bool
	log   *slog.Logger
}

type podState struct {
	pod             *corev1.Pod
	assumed         bool
	bindingFinished bool
}

type imageState struct {
	size  int64
	nodes map[string]bool
}

// New returns an empty cache.
func New(log *slog.Logger) *Cache {
	if log == nil {
		log = slog.Default()
	}
	return &Cache{
		nodes:  map[string]*framework.NodeInfo{},
		tree:   newNodeTree(),
		pods:   map[string]*podState{},
		images: map[string]*imageState{},
		dirty:  map[string]bool{},
		log:    log,
	}
}

func (c *Cache) nodeInfo(name string) *framework.NodeInfo {
	c.dirty[name] = true
	ni, ok := c.nodes[name]
	if !ok {
		ni = framework.NewNodeInfo()
		c.nodes[name] = ni
	}
	return ni
}

// AddNode adds or replaces a node.
func (c *Cache) AddNode(node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	name := node.GetMetadata().GetName()
	ni := c.nodeInfo(name)
	old := ni.Node()
	c.removeImages(old)
	c.tree.update(old, node)
	c.treeChanged = c.treeChanged || old == nil || zoneKey(old) != zoneKey(node)
	ni.SetNode(node)
	c.addImages(node)
}

// UpdateNode replaces a node.
func (c *Cache) UpdateNode(_, newNode *corev1.Node) { c.AddNode(newNode) }

// RemoveNode removes a node; its pods stay known until they are deleted.
func (c *Cache) RemoveNode(node *corev1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	name := node.GetMetadata().GetName()
	ni, ok := c.nodes[name]
	if !ok || ni.Node() == nil {
		return
	}
	c.dirty[name] = true
	c.removeImages(ni.Node())
	c.tree.remove(ni.Node())
	c.treeChanged = true
	if len(ni.Pods) == 0 {
		delete(c.nodes, name)
		return
	}
	ni.RemoveNode()
}

func (c *Cache) addImages(node *corev1.Node) {
	name := node.GetMetadata().GetName()
	for _, img := range node.GetStatus().GetImages() {
		for _, n := range img.GetNames() {
			n = framework.NormalizedImageName(n)
			st, ok := c.images[n]
			if !ok {
				st = &imageState{size: img.GetSizeBytes(), nodes: map[string]bool{}}
				c.images[n] = st
			}
			st.nodes[name] = true
		}
	}
}

func (c *Cache) removeImages(node *corev1.Node) {
	if node == nil {
		return
	}
	name := node.GetMetadata().GetName()
	for _, img := range node.GetStatus().GetImages() {
		for _, n := range img.GetNames() {
			n = framework.NormalizedImageName(n)
			if st, ok := c.images[n]; ok {
				delete(st.nodes, name)
				if len(st.nodes) == 0 {
					delete(c.images, n)
				}
			}
		}
	}
}

func (c *Cache) imageSummaries(node *corev1.Node) map[string]*framework.ImageStateSummary {
	out := map[string]*framework.ImageStateSummary{}
	for _, img := range node.GetStatus().GetImages() {
		for _, n := range img.GetNames() {
			n = framework.NormalizedImageName(n)
			if st, ok := c.images[n]; ok {
				out[n] = &framework.ImageStateSummary{Size: st.size, NumNodes: len(st.nodes)}
			}
		}
	}
	return out
}

// AssumePod counts pod (whose spec.nodeName is the chosen node) on its
// node before its binding is confirmed.
func (c *Cache) AssumePod(pod *corev1.Pod) error { return c.AssumePodInfo(framework.NewPodInfo(pod)) }

// AssumePodInfo is AssumePod for a pod whose PodInfo is at hand.
func (c *Cache) AssumePodInfo(pi *framework.PodInfo) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	pod := pi.Pod
	key := framework.PodKey(pod)
	if _, ok := c.pods[key]; ok {
		return fmt.Errorf("%w: %s", ErrPodAssumed, key)
	}
	c.nodeInfo(pod.GetSpec().GetNodeName()).AddPodInfo(pi)
	c.pods[key] = &podState{pod: pod, assumed: true}
	return nil
}

// FinishBinding marks an assumed pod's binding as sent.
func (c *Cache) FinishBinding(pod *corev1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.pods[framework.PodKey(pod)]
	if !ok || !st.assumed {
		return ErrNotAssumed
	}
	st.bindingFinished = true
	return nil
}

// ForgetPod drops an assumed pod whose binding failed.
func (c *Cache) ForgetPod(pod *corev1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := framework.PodKey(pod)
	st, ok := c.pods[key]
	if !ok || !st.assumed {
		return ErrNotAssumed
	}
	c.removePod(st.pod)
	delete(c.pods, key)
	return nil
}

// IsAssumedPod reports whether pod is assumed and not yet confirmed.
func (c *Cache) IsAssumedPod(pod *corev1.Pod) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	st, ok := c.pods[framework.PodKey(pod)]
	return ok && st.assumed
}

// AddPod records a pod the informer saw bound to a node; it confirms an assumed pod.
func (c *Cache) AddPod(pod *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := framework.PodKey(pod)
	if st, ok := c.pods[key]; ok {
		// Confirmed (or seen again): replace what we had.
		c.removePod(st.pod)
	}
	c.addPod(pod)
	c.pods[key] = &podState{pod: pod}
}

// UpdatePod replaces a bound pod.
func (c *Cache) UpdatePod(_, newPod *corev1.Pod) { c.AddPod(newPod) }

// RemovePod forgets a pod that was deleted (or finished).
func (c *Cache) RemovePod(pod *corev1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := framework.PodKey(pod)
	st, ok := c.pods[key]
	if !ok {
		return
	}
	c.removePod(st.pod)
	delete(c.pods, key)
}

func (c *Cache) addPod(pod *corev1.Pod) {
	c.nodeInfo(pod.GetSpec().GetNodeName()).AddPod(pod)
}

func (c *Cache) removePod(pod *corev1.Pod) {
	name := pod.GetSpec().GetNodeName()
	ni, ok := c.nodes[name]
	if !ok {
		return
	}
	c.dirty[name] = true
	if err := ni.RemovePod(pod); err != nil {
		c.log.Error("scheduler cache is inconsistent", "err", err)
	}
	if len(ni.Pods) == 0 && ni.Node() == nil {
		delete(c.nodes, name)
	}
}

// NodeCount and PodCount size the cache (nodes with a Node object; pods assumed or bound).
func (c *Cache) NodeCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tree.n
}

func (c *Cache) PodCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.pods)
}

// UpdateSnapshot brings s up to date, copying only the nodes that changed
// since the last update. A cache feeds one snapshot (the scheduler's).
func (c *Cache) UpdateSnapshot(s *Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	affinityChanged, relabelled := false, false
	for name := range c.dirty {
		ni, ok := c.nodes[name]
		if !ok || ni.Node() == nil {
			if existing, ok := s.nodeInfoMap[name]; ok {
				s.indexPodLabels(existing, -1)
				delete(s.nodeInfoMap, name)
				c.treeChanged = true
			}
			continue
		}
		existing, ok := s.nodeInfoMap[name]
		if ok && existing.Generation == ni.Generation {
			continue
		}
		clone := ni.Clone()
		clone.ImageStates = c.imageSummaries(ni.Node())
		if ok {
			if len(existing.PodsWithAffinity) > 0 || len(clone.PodsWithAffinity) > 0 ||
				len(existing.PodsWithRequiredAntiAffinity) > 0 || len(clone.PodsWithRequiredAntiAffinity) > 0 {
				affinityChanged = true
			}
			if existing.Node() != clone.Node() && !maps.Equal(existing.Node().GetMetadata().GetLabels(), clone.Node().GetMetadata().GetLabels()) {
				relabelled = true
			}
			s.indexPodLabels(existing, -1)
			*existing = *clone // keep the pointer the lists hold
			s.indexPodLabels(existing, 1)
		} else {
			s.nodeInfoMap[name] = clone
			s.indexPodLabels(clone, 1)
			c.treeChanged = true
		}
		s.generation = max(s.generation, ni.Generation)
	}
	clear(c.dirty)
	if c.treeChanged {
		names := c.tree.list()
		s.nodeInfoList = s.nodeInfoList[:0]
		for _, n := range names {
			if ni, ok := s.nodeInfoMap[n]; ok {
				s.nodeInfoList = append(s.nodeInfoList, ni)
			}
		}
		c.treeChanged = false
		affinityChanged, relabelled = true, true
	}
	if affinityChanged {
		s.rebuildAffinityLists()
	}
	if relabelled {
		s.invalidateTopology()
	}
}
