package runtime

import (
	"fmt"
	"sync"
	"time"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
)

// waitingPods holds the pods that Permit plugins told to wait, by UID.
type waitingPods struct {
	mu   sync.RWMutex
	pods map[string]*waitingPod
}

func newWaitingPods() *waitingPods { return &waitingPods{pods: map[string]*waitingPod{}} }

func (m *waitingPods) add(wp *waitingPod) {
	m.mu.Lock()
	m.pods[wp.pod.GetMetadata().GetUid()] = wp
	m.mu.Unlock()
}

func (m *waitingPods) remove(uid string) {
	m.mu.Lock()
	delete(m.pods, uid)
	m.mu.Unlock()
}

func (m *waitingPods) get(uid string) *waitingPod {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.pods[uid]
}

func (m *waitingPods) iterate(fn func(framework.WaitingPod)) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, wp := range m.pods {
		fn(wp)
	}
}

// waitingPod is a pod held by one or more Permit plugins, each with a timeout.
type waitingPod struct {
	pod     *corev1.Pod
	mu      sync.Mutex
	pending map[string]*time.Timer
	result  chan *framework.Status
}

var _ framework.WaitingPod = (*waitingPod)(nil)

func newWaitingPod(pod *corev1.Pod, plugins map[string]time.Duration) *waitingPod {
	wp := &waitingPod{pod: pod, pending: map[string]*time.Timer{}, result: make(chan *framework.Status, 1)}
	wp.mu.Lock()
	defer wp.mu.Unlock()
	for name, d := range plugins {
		wp.pending[name] = time.AfterFunc(d, func() {
			wp.Reject(name, fmt.Sprintf("rejected due to timeout after waiting %v at plugin %v", d, name))
		})
	}
	return wp
}

func (wp *waitingPod) GetPod() *corev1.Pod { return wp.pod }

func (wp *waitingPod) Allow(pluginName string) {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	if t, ok := wp.pending[pluginName]; ok {
		t.Stop()
		delete(wp.pending, pluginName)
	}
	if len(wp.pending) != 0 {
		return
	}
	select {
	case wp.result <- nil:
	default:
	}
}

func (wp *waitingPod) Reject(pluginName, msg string) {
	wp.mu.Lock()
	defer wp.mu.Unlock()
	for _, t := range wp.pending {
		t.Stop()
	}
	select {
	case wp.result <- framework.NewStatus(framework.Unschedulable, msg).WithPlugin(pluginName):
	default:
	}
}
