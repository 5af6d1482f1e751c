package status

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client/workqueue"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// PodClient is the part of the pods client the manager uses;
// *client.Client[*corev1.Pod] is one.
type PodClient interface {
	Get(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	UpdateStatus(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error)
	Delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) (*corev1.Pod, error)
}

// APIPods finds the object in the apiserver a kubelet pod's status goes
// to: the pod itself, or a static pod's mirror pod. It reads a cache and
// may return nil when the cache has none.
type APIPods interface {
	APIPod(uid string) *corev1.Pod
}

type entry struct {
	namespace, name string
	static          bool
	status          *corev1.PodStatus
	span            trace.SpanContext
	written         *corev1.PodStatus // what this manager last wrote
}

// Manager writes pod statuses.
type Manager struct {
	pods  PodClient
	api   APIPods
	log   *slog.Logger
	queue *workqueue.RateLimitingQueue[string]

	mu      sync.RWMutex
	entries map[string]*entry

	// Writes counts status writes (for tests and benchmarks).
	writes int64
}

// NewManager returns a Manager writing through pods.
func NewManager(pods PodClient, api APIPods, log *slog.Logger) *Manager {
	return &Manager{
		pods: pods, api: api, log: log,
		queue:   workqueue.NewRateLimitingQueue[string](workqueue.NewItemExponentialFailureRateLimiter[string](10*time.Millisecond, 10*time.Second)),
		entries: map[string]*entry{},
	}
}

// SetPodStatus records pod's newly computed status and queues its write.
// ctx's span becomes the traceparent stamped on the write.
func (m *Manager) SetPodStatus(ctx context.Context, pod *corev1.Pod, static bool, st *corev1.PodStatus) {
	uid := pod.GetMetadata().GetUid()
	m.mu.Lock()
	e := m.entries[uid]
	if e == nil {
		e = &entry{namespace: pod.GetMetadata().GetNamespace(), name: pod.GetMetadata().GetName(), static: static}
		m.entries[uid] = e
	}
	changed := !proto.Equal(e.status, st)
	e.status = st
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		e.span = sc
	}
	m.mu.Unlock()
	if changed {
		m.queue.Add(uid)
	}
}

// PodStatus is a pod's latest computed status.
func (m *Manager) PodStatus(uid string) (*corev1.PodStatus, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if e := m.entries[uid]; e != nil && e.status != nil {
		return e.status, true
	}
	return nil, false
}

// Forget drops a pod the kubelet is done with.
func (m *Manager) Forget(uid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.entries, uid)
}

// Writes is how many status writes succeeded.
func (m *Manager) Writes() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.writes
}

// Run writes statuses with workers goroutines until ctx ends, and
// requeues every pod each resync to repair drift.
func (m *Manager) Run(ctx context.Context, workers int, resync time.Duration) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for m.processNext(ctx) {
			}
		})
	}
	t := time.NewTicker(resync)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			m.queue.ShutDown()
			wg.Wait()
			return
		case <-t.C:
			m.mu.RLock()
			for uid := range m.entries {
				m.queue.Add(uid)
			}
			m.mu.RUnlock()
		}
	}
}

func (m *Manager) processNext(ctx context.Context) bool {
	uid, shutdown := m.queue.Get()
	if shutdown {
		return false
	}
	defer m.queue.Done(uid)
	if err := m.sync(ctx, uid); err != nil {
		if errors.Is(err, errNoMirror) || apierrors.IsConflict(err) {
			m.log.Debug("write pod status", "uid", uid, "err", err)
		} else {
			m.log.Warn("write pod status", "uid", uid, "err", err)
		}
		m.queue.AddRateLimited(uid)
		return true
	}
	m.queue.Forget(uid)
	return true
}

// errNoMirror: a static pod's mirror pod does not exist yet.
var errNoMirror = errors.New("mirror pod not found")

// sync writes one pod's status if the apiserver's differs.
func (m *Manager) sync(ctx context.Context, uid string) error {
	m.mu.RLock()
	e := m.entries[uid]
	var want *corev1.PodStatus
	var ns, name string
	var static bool
	var sc trace.SpanContext
	var written *corev1.PodStatus
	if e != nil {
		want, ns, name, static, sc, written = e.status, e.namespace, e.name, e.static, e.span, e.written
	}
	m.mu.RUnlock()
	if want == nil {
		return nil
	}
	cur := m.api.APIPod(uid)
	if cur != nil && proto.Equal(cur.GetStatus(), want) {
		m.markWritten(uid, want)
		return nil
	}
	if cur == nil && proto.Equal(written, want) {
		return nil
	}
	if cur == nil {
		if static {
			return errNoMirror
		}
		p, err := m.pods.Get(ctx, ns, name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if p.GetMetadata().GetUid() != uid {
			return nil // a new pod by the same name
		}
		cur = p
	} else if cur.GetMetadata().GetUid() != uid && !static {
		return nil
	}
	if err := m.write(ctx, cur, want, sc); err != nil {
		return err
	}
	m.markWritten(uid, want)
	return nil
}

func (m *Manager) markWritten(uid string, st *corev1.PodStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.entries[uid]; e != nil {
		e.written = st
	}
}

// write replaces cur's status with want, retrying once on a conflict.
func (m *Manager) write(ctx context.Context, cur *corev1.Pod, want *corev1.PodStatus, sc trace.SpanContext) error {
	for attempt := 0; ; attempt++ {
		next := object.Copy(cur)
		next.Status = want
		wctx := ctx
		if sc.IsValid() {
			// The write continues the sync that computed the status.
			wctx = trace.ContextWithSpanContext(ctx, sc)
			telemetry.Stamp(wctx, next)
		}
		_, err := m.pods.UpdateStatus(wctx, next)
		if err == nil {
			m.mu.Lock()
			m.writes++
			m.mu.Unlock()
			return nil
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		if !apierrors.IsConflict(err) || attempt > 0 {
			return err
		}
		fresh, gerr := m.pods.Get(ctx, cur.GetMetadata().GetNamespace(), cur.GetMetadata().GetName())
		if gerr != nil {
			if apierrors.IsNotFound(gerr) {
				return nil
			}
			return gerr
		}
		if fresh.GetMetadata().GetUid() != cur.GetMetadata().GetUid() {
			return nil
		}
		cur = fresh
	}
}

// WriteNow writes pod's status synchronously (the final status of a pod
// about to be deleted), to the pod itself.
func (m *Manager) WriteNow(ctx context.Context, pod *corev1.Pod, st *corev1.PodStatus) error {
	cur, err := m.pods.Get(ctx, pod.GetMetadata().GetNamespace(), pod.GetMetadata().GetName())
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if cur.GetMetadata().GetUid() != pod.GetMetadata().GetUid() || proto.Equal(cur.GetStatus(), st) {
		return nil
	}
	return m.write(ctx, cur, st, trace.SpanContextFromContext(ctx))
}

// DeletePod deletes a pod the kubelet has finished terminating, with grace
// period 0 and its UID as precondition.
func (m *Manager) DeletePod(ctx context.Context, pod *corev1.Pod) error {
	md := pod.GetMetadata()
	uid := md.GetUid()
	_, err := m.pods.Delete(ctx, md.GetNamespace(), md.GetName(), &metav1.DeleteOptions{
		GracePeriodSeconds: proto.Int64(0),
		Preconditions:      &metav1.Preconditions{Uid: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	m.Forget(uid)
	return nil
}
