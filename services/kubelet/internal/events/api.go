package events

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/clock"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// APIRecorder writes Events through the apiserver. Eventf never blocks:
// when the queue is full the event is dropped and logged.
type APIRecorder struct {
	events *client.Client[*corev1.Event]
	host   string
	clock  clock.Clock
	log    *slog.Logger
	queue  chan *corev1.Event

	mu   sync.Mutex
	seen map[string]*corev1.Event // repeats fold into these
}

var _ Recorder = (*APIRecorder)(nil)

// Component is the source component of the kubelet's events.
const Component = "kubelet"

// NewAPIRecorder records events from host (the node's name).
func NewAPIRecorder(conn grpc.ClientConnInterface, host string, c clock.Clock, log *slog.Logger) *APIRecorder {
	return &APIRecorder{
		events: client.Events(conn), host: host, clock: c, log: log,
		queue: make(chan *corev1.Event, 1000), seen: map[string]*corev1.Event{},
	}
}

func (r *APIRecorder) Eventf(ref *corev1.ObjectReference, eventtype, reason, format string, args ...any) {
	now := r.clock.Now()
	ns := ref.GetNamespace()
	if ns == "" {
		ns = "default"
	}
	ev := &corev1.Event{
		Metadata: &metav1.ObjectMeta{
			Name:      ref.GetName() + "." + strconv.FormatInt(now.UnixNano(), 16),
			Namespace: ns,
		},
		InvolvedObject:     ref,
		Reason:             reason,
		Message:            fmt.Sprintf(format, args...),
		Source:             &corev1.EventSource{Component: Component, Host: r.host},
		FirstTimestamp:     &metav1.Time{Seconds: now.Unix()},
		LastTimestamp:      &metav1.Time{Seconds: now.Unix()},
		Count:              1,
		Type:               eventtype,
		ReportingComponent: Component,
		ReportingInstance:  r.host,
	}
	select {
	case r.queue <- ev:
	default:
		r.log.Warn("event dropped: queue full", "reason", reason, "object", ref.GetNamespace()+"/"+ref.GetName())
	}
}

// Run writes queued events until ctx ends.
func (r *APIRecorder) Run(ctx context.Context) {
	gc := time.NewTicker(10 * time.Minute)
	defer gc.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-gc.C:
			r.forgetOld()
		case ev := <-r.queue:
			r.write(ctx, ev)
		}
	}
}

func foldKey(ev *corev1.Event) string {
	o := ev.GetInvolvedObject()
	return o.GetUid() + "|" + o.GetFieldPath() + "|" + ev.GetType() + "|" + ev.GetReason() + "|" + ev.GetMessage()
}

func (r *APIRecorder) write(ctx context.Context, ev *corev1.Event) {
	key := foldKey(ev)
	r.mu.Lock()
	prev := r.seen[key]
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if prev != nil {
		next := prev
		next.Count++
		next.LastTimestamp = ev.LastTimestamp
		next.Metadata.ResourceVersion = ""
		out, err := r.events.Update(ctx, next)
		if err == nil {
			r.remember(key, out)
			return
		}
		if !apierrors.IsNotFound(err) {
			r.log.Warn("update event", "reason", ev.Reason, "err", err)
			return
		}
	}
	out, err := r.events.Create(ctx, ev)
	if err != nil {
		r.log.Warn("create event", "reason", ev.Reason, "err", err)
		return
	}
	r.remember(key, out)
}

func (r *APIRecorder) remember(key string, ev *corev1.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[key] = ev
}

func (r *APIRecorder) forgetOld() {
	r.mu.Lock()
	defer r.mu.Unlock()
	cutoff := r.clock.Now().Add(-time.Hour).Unix()
	for k, ev := range r.seen {
		if ev.GetLastTimestamp().GetSeconds() < cutoff {
			delete(r.seen, k)
		}
	}
}
