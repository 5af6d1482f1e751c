package probes

import (
	"context"
	"time"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/events"
)

// worker probes one container's probe of one kind, periodically.
type worker struct {
	m         *Manager
	key       workerKey
	pod       *corev1.Pod
	container *corev1.Container
	kind      Kind
	spec      *corev1.Probe
	done      chan struct{}

	containerID string
	onHold      bool
	tracker     Tracker
}

func newWorker(m *Manager, pod *corev1.Pod, c *corev1.Container, kind Kind, spec *corev1.Probe) *worker {
	return &worker{
		m: m, key: workerKey{pod.GetMetadata().GetUid(), c.GetName(), kind}, pod: pod, container: c, kind: kind, spec: spec,
		done:    make(chan struct{}),
		tracker: Tracker{SuccessThreshold: int(defaulted(spec.GetSuccessThreshold(), 1)), FailureThreshold: int(defaulted(spec.GetFailureThreshold(), 3))},
	}
}

func defaulted(v, def int32) int32 {
	if v <= 0 {
		return def
	}
	return v
}

func (w *worker) stop() {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
}

func (w *worker) run(ctx context.Context) {
	period := time.Duration(defaulted(w.spec.GetPeriodSeconds(), 10)) * time.Second
	defer func() {
		if w.containerID != "" {
			w.m.results[w.kind].remove(w.containerID)
		}
		w.m.removeWorker(w.key, w)
	}()
	for {
		if !w.probe(ctx) {
			return
		}
		t := w.m.clock.NewTimer(period)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-w.done:
			t.Stop()
			return
		case <-t.C():
		}
	}
}

func (w *worker) set(r Result) {
	if w.m.results[w.kind].set(w.containerID, r) && w.m.onChange != nil {
		w.m.onChange(w.key.uid)
	}
}

// probe runs one round; false ends the worker.
func (w *worker) probe(ctx context.Context) bool {
	status, ok := w.m.status.PodStatus(w.key.uid)
	if !ok {
		return true // not synced yet
	}
	if status.GetPhase() == "Failed" || status.GetPhase() == "Succeeded" {
		return false
	}
	var cs *corev1.ContainerStatus
	for _, s := range status.GetContainerStatuses() {
		if s.GetName() == w.container.GetName() {
			cs = s
		}
	}
	id := TrimRuntimePrefix(cs.GetContainerId())
	if id == "" {
		return true // not created yet
	}
	if id != w.containerID {
		if w.containerID != "" {
			w.m.results[w.kind].remove(w.containerID)
		}
		w.containerID = id
		if _, seeded := w.m.results[w.kind].get(id); !seeded {
			w.set(w.kind.initial())
		}
		w.onHold = false
		w.tracker.Reset()
	}
	if w.onHold {
		return true
	}
	running := cs.GetState().GetRunning()
	if running == nil {
		w.set(Failure)
		return cs.GetState().GetTerminated() == nil || w.pod.GetSpec().GetRestartPolicy() != "Never"
	}
	if w.pod.GetMetadata().GetDeletionTimestamp() != nil && w.kind != Readiness {
		w.set(Success) // no restarts while the pod shuts down
		return true
	}
	started := time.Unix(running.GetStartedAt().GetSeconds(), 0)
	if w.m.clock.Since(started) < time.Duration(w.spec.GetInitialDelaySeconds())*time.Second {
		return true
	}
	if cs.GetStarted() {
		if w.kind == Startup {
			return true // done once the container has started
		}
	} else if w.kind != Startup {
		return true // wait for the startup probe
	}

	result, msg, err := w.m.prober.Run(ctx, w.spec, Target{PodIP: status.GetPodIp(), Container: w.container, ContainerID: id})
	if err != nil {
		w.m.log.Debug("probe errored", "pod", w.pod.GetMetadata().GetNamespace()+"/"+w.pod.GetMetadata().GetName(),
			"container", w.container.GetName(), "probe", w.kind, "err", err)
		if w.m.recorder != nil {
			w.m.recorder.Eventf(w.pod, events.ContainerPath(w.container.GetName(), false), events.Warning, "Unhealthy", "%s probe errored: %v", w.kind, err)
		}
		return true
	}
	if result == Failure && w.m.recorder != nil {
		w.m.recorder.Eventf(w.pod, events.ContainerPath(w.container.GetName(), false), events.Warning, "Unhealthy", "%s probe failed: %s", w.kind, msg)
	}
	r, report := w.tracker.Observe(result)
	if !report {
		return true
	}
	w.set(r)
	if r == Failure && w.kind != Readiness {
		// The container will be restarted: wait for its successor.
		w.onHold = true
		w.tracker.Reset()
	}
	return true
}
