package probes

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"podline.dev/pkg/clock"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/events"
)

// StatusProvider gives a pod's latest status as the kubelet computed it:
// which container instance runs, since when, and whether it has started.
type StatusProvider interface {
	PodStatus(uid string) (*corev1.PodStatus, bool)
}

// Manager runs the probe workers of the pods on the node.
type Manager struct {
	prober   *Prober
	status   StatusProvider
	recorder events.Recorder
	clock    clock.Clock
	log      *slog.Logger
	onChange func(podUID string)

	results map[Kind]*results

	mu      sync.Mutex
	ctx     context.Context
	workers map[workerKey]*worker
}

type workerKey struct {
	uid, container string
	kind           Kind
}

// NewManager returns a Manager; onChange is called (from a worker's
// goroutine) when a result changes, with the pod's UID.
func NewManager(ctx context.Context, prober *Prober, status StatusProvider, recorder events.Recorder, c clock.Clock, log *slog.Logger, onChange func(podUID string)) *Manager {
	return &Manager{
		prober: prober, status: status, recorder: recorder, clock: c, log: log, onChange: onChange,
		results: map[Kind]*results{Liveness: newResults(), Readiness: newResults(), Startup: newResults()},
		ctx:     ctx,
		workers: map[workerKey]*worker{},
	}
}

// AddPod starts workers for the probes of pod's containers that have
// none yet. Readiness last reported for a container instance that still
// runs is kept (a restarted kubelet does not flip ready pods to unready).
func (m *Manager) AddPod(pod *corev1.Pod) {
	uid := pod.GetMetadata().GetUid()
	for _, cs := range pod.GetStatus().GetContainerStatuses() {
		if id := TrimRuntimePrefix(cs.GetContainerId()); id != "" && cs.GetReady() && cs.GetState().GetRunning() != nil {
			if _, ok := m.results[Readiness].get(id); !ok {
				m.results[Readiness].set(id, Success)
			}
			if _, ok := m.results[Startup].get(id); !ok && cs.GetStarted() {
				m.results[Startup].set(id, Success)
			}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range pod.GetSpec().GetContainers() {
		for kind, p := range map[Kind]*corev1.Probe{Liveness: c.GetLivenessProbe(), Readiness: c.GetReadinessProbe(), Startup: c.GetStartupProbe()} {
			if p == nil {
				continue
			}
			key := workerKey{uid, c.GetName(), kind}
			if m.workers[key] != nil {
				continue
			}
			w := newWorker(m, pod, c, kind, p)
			m.workers[key] = w
			go w.run(m.ctx)
		}
	}
}

// RemovePod stops the workers of a pod.
func (m *Manager) RemovePod(uid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, w := range m.workers {
		if key.uid == uid {
			w.stop()
			delete(m.workers, key)
		}
	}
}

// Workers is the number of running workers.
func (m *Manager) Workers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.workers)
}

func (m *Manager) removeWorker(key workerKey, w *worker) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.workers[key] == w {
		delete(m.workers, key)
	}
}

// Result is the current result of a kind of probe for a container instance.
func (m *Manager) Result(kind Kind, containerID string) (Result, bool) {
	return m.results[kind].get(TrimRuntimePrefix(containerID))
}

// TrimRuntimePrefix turns "containerd://abc" into "abc".
func TrimRuntimePrefix(id string) string {
	if i := strings.Index(id, "://"); i >= 0 {
		return id[i+3:]
	}
	return id
}
