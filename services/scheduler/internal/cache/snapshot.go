package cache

import (
	"fmt"
	"sync"

	"podline.dev/services/scheduler/internal/framework"
)

// Snapshot is a copy of the cache for one scheduling cycle. Plugins read it
// through framework.SharedLister; only UpdateSnapshot writes it, between cycles.
type Snapshot struct {
	nodeInfoMap                      map[string]*framework.NodeInfo
	nodeInfoList                     []*framework.NodeInfo
	havePodsWithAffinity             []*framework.NodeInfo
	havePodsWithRequiredAntiAffinity []*framework.NodeInfo
	generation                       int64
	// podLabels indexes nodes by the labels of their pods (PodLabelNodes).
	podLabels map[string]map[*framework.NodeInfo]int
	// topology caches TopologyValues until a node comes, goes or is relabelled.
	topologyMu sync.Mutex
	topology   map[string]map[string]int
}

var (
	_ framework.SharedLister   = (*Snapshot)(nil)
	_ framework.NodeInfoLister = (*Snapshot)(nil)
)

// NewEmptySnapshot returns a snapshot to refresh with Cache.UpdateSnapshot.
func NewEmptySnapshot() *Snapshot {
	return &Snapshot{nodeInfoMap: map[string]*framework.NodeInfo{}, podLabels: map[string]map[*framework.NodeInfo]int{}}
}

// NewSnapshot builds a snapshot directly from nodes with pods on them (tests, benchmarks).
func NewSnapshot(nodeInfos ...*framework.NodeInfo) *Snapshot {
	s := NewEmptySnapshot()
	for _, ni := range nodeInfos {
		s.nodeInfoMap[ni.Name()] = ni
		s.nodeInfoList = append(s.nodeInfoList, ni)
		s.indexPodLabels(ni, 1)
	}
	s.rebuildAffinityLists()
	return s
}

func (s *Snapshot) rebuildAffinityLists() {
	s.havePodsWithAffinity = s.havePodsWithAffinity[:0]
	s.havePodsWithRequiredAntiAffinity = s.havePodsWithRequiredAntiAffinity[:0]
	for _, ni := range s.nodeInfoList {
		if len(ni.PodsWithAffinity) > 0 {
			s.havePodsWithAffinity = append(s.havePodsWithAffinity, ni)
		}
		if len(ni.PodsWithRequiredAntiAffinity) > 0 {
			s.havePodsWithRequiredAntiAffinity = append(s.havePodsWithRequiredAntiAffinity, ni)
		}
	}
}

func (s *Snapshot) NodeInfos() framework.NodeInfoLister { return s }
func (s *Snapshot) List() []*framework.NodeInfo         { return s.nodeInfoList }
func (s *Snapshot) HavePodsWithAffinityList() []*framework.NodeInfo {
	return s.havePodsWithAffinity
}
func (s *Snapshot) HavePodsWithRequiredAntiAffinityList() []*framework.NodeInfo {
	return s.havePodsWithRequiredAntiAffinity
}

// Get returns one node's info.
func (s *Snapshot) Get(name string) (*framework.NodeInfo, error) {
	if ni, ok := s.nodeInfoMap[name]; ok && ni.Node() != nil {
		return ni, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
}

// indexPodLabels adds (sign 1) or removes (sign −1) ni's pod labels from the index.
func (s *Snapshot) indexPodLabels(ni *framework.NodeInfo, sign int) {
	ni.PodLabelCounts(func(k string, n int) {
		m := s.podLabels[k]
		if sign > 0 {
			if m == nil {
				m = map[*framework.NodeInfo]int{}
				s.podLabels[k] = m
			}
			m[ni] = n
			return
		}
		delete(m, ni)
		if len(m) == 0 {
			delete(s.podLabels, k)
		}
	})
}

// PodLabelNodes are the nodes whose pods carry a label (see framework.PodLabelKey).
func (s *Snapshot) PodLabelNodes(podLabelKey string) map[*framework.NodeInfo]int {
	return s.podLabels[podLabelKey]
}

// TopologyValues are the values of a node label key and how many nodes have each.
func (s *Snapshot) TopologyValues(key string) map[string]int {
	s.topologyMu.Lock()
	defer s.topologyMu.Unlock()
	if m, ok := s.topology[key]; ok {
		return m
	}
	m := map[string]int{}
	for _, ni := range s.nodeInfoList {
		if v, ok := ni.Node().GetMetadata().GetLabels()[key]; ok {
			m[v]++
		}
	}
	if s.topology == nil {
		s.topology = map[string]map[string]int{}
	}
	s.topology[key] = m
	return m
}

func (s *Snapshot) invalidateTopology() {
	s.topologyMu.Lock()
	s.topology = nil
	s.topologyMu.Unlock()
}

// NumNodes is how many nodes the snapshot holds.
func (s *Snapshot) NumNodes() int { return len(s.nodeInfoList) }
