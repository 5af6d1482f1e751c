package queue

import (
	"container/heap"

	"podline.dev/services/scheduler/internal/framework"
)

// podHeap is a heap of queued pods, indexed by key for updates and removal.
type podHeap struct {
	items []*framework.QueuedPodInfo
	index map[string]int
	less  func(a, b *framework.QueuedPodInfo) bool
}

func newPodHeap(less func(a, b *framework.QueuedPodInfo) bool) *podHeap {
	return &podHeap{index: map[string]int{}, less: less}
}

func (h *podHeap) Len() int           { return len(h.items) }
func (h *podHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *podHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[h.items[i].Key()] = i
	h.index[h.items[j].Key()] = j
}
func (h *podHeap) Push(x any) {
	p := x.(*framework.QueuedPodInfo)
	h.index[p.Key()] = len(h.items)
	h.items = append(h.items, p)
}
func (h *podHeap) Pop() any {
	n := len(h.items) - 1
	p := h.items[n]
	h.items[n] = nil
	h.items = h.items[:n]
	delete(h.index, p.Key())
	return p
}

// addOrUpdate inserts p, or replaces the entry with p's key.
func (h *podHeap) addOrUpdate(p *framework.QueuedPodInfo) {
	if i, ok := h.index[p.Key()]; ok {
		h.items[i] = p
		heap.Fix(h, i)
		return
	}
	heap.Push(h, p)
}

func (h *podHeap) get(key string) (*framework.QueuedPodInfo, bool) {
	i, ok := h.index[key]
	if !ok {
		return nil, false
	}
	return h.items[i], true
}

func (h *podHeap) delete(key string) (*framework.QueuedPodInfo, bool) {
	i, ok := h.index[key]
	if !ok {
		return nil, false
	}
	return heap.Remove(h, i).(*framework.QueuedPodInfo), true
}

func (h *podHeap) peek() *framework.QueuedPodInfo {
	if len(h.items) == 0 {
		return nil
	}
	return h.items[0]
}

func (h *podHeap) pop() *framework.QueuedPodInfo {
	if len(h.items) == 0 {
		return nil
	}
	return heap.Pop(h).(*framework.QueuedPodInfo)
}
