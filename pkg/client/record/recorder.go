package record

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// Event types, as in core/v1.
const (
	EventTypeNormal  = "Normal"
	EventTypeWarning = "Warning"
)

// EventRecorder records events about objects. Implementations must not block.
type EventRecorder interface {
	// Eventf records an event of eventtype (EventTypeNormal or
	// EventTypeWarning) about obj; reason is a short UpperCamelCase word,
	// the message is fmt.Sprintf(messageFmt, args...).
	Eventf(obj object.Object, eventtype, reason, messageFmt string, args ...any)
}

// Defaults, as in client-go's event broadcaster.
const (
	DefaultQueueSize = 1000
	DefaultCacheSize = 4096
	DefaultWorkers   = 4
	writeTimeout     = 10 * time.Second
	writeAttempts    = 3
)

// Recorder writes Events to the apiserver. It is safe for concurrent use.
type Recorder struct {
	events    *client.Client[*corev1.Event]
	component string
	host      string
	clock     clock.Clock
	log       *slog.Logger
	retryWait time.Duration

	queueSize int
	cacheSize int
	workers   []*worker

	mu       sync.Mutex
	lastNano int64
	closed   bool
	wg       sync.WaitGroup
}

// worker writes the events of the aggregation keys that hash to it, in order.
type worker struct {
	queue chan *corev1.Event
	cache *lru // aggregation key -> the Event last written
}

var _ EventRecorder = (*Recorder)(nil)

// Option configures a Recorder.
type Option func(*Recorder)

// WithClock sets the clock for timestamps (default the wall clock).
func WithClock(c clock.Clock) Option { return func(r *Recorder) { r.clock = c } }

// WithQueueSize bounds the events waiting to be written (default 1000).
func WithQueueSize(n int) Option { return func(r *Recorder) { r.queueSize = n } }

// WithCacheSize bounds the events remembered for aggregation (default 4096).
func WithCacheSize(n int) Option { return func(r *Recorder) { r.cacheSize = n } }

// WithWorkers sets how many writes may be in flight at once (default 4).
// All events about one object go through the same worker, in the order
// they were recorded (Pulled before Created before Started), and identical
// events' counts never race.
func WithWorkers(n int) Option { return func(r *Recorder) { r.workers = make([]*worker, max(n, 1)) } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(r *Recorder) { r.log = l } }

// NewRecorder returns a Recorder writing Events from component (e.g.
// "default-scheduler") on host over conn, and starts its writer. Call
// Shutdown to flush and stop it.
func NewRecorder(conn grpc.ClientConnInterface, component, host string, opts ...Option) *Recorder {
	r := &Recorder{
		events:    client.Events(conn),
		component: component,
		host:      host,
		clock:     clock.Real{},
		log:       slog.Default(),
		retryWait: 200 * time.Millisecond,
		queueSize: DefaultQueueSize,
		cacheSize: DefaultCacheSize,
		workers:   make([]*worker, DefaultWorkers),
	}
	for _, o := range opts {
		o(r)
	}
	r.log = r.log.With("component", component)
	n := len(r.workers)
	for i := range r.workers {
		w := &worker{queue: make(chan *corev1.Event, max(r.queueSize/n, 1)), cache: newLRU(r.cacheSize / n)}
		r.workers[i] = w
		r.wg.Go(func() { r.run(w) })
	}
	return r
}

// Eventf queues an event about obj; it never blocks.
func (r *Recorder) Eventf(obj object.Object, eventtype, reason, messageFmt string, args ...any) {
	r.EventfAt(obj, "", eventtype, reason, messageFmt, args...)
}

// EventfAt queues an event about a part of obj, named by fieldPath as
// involvedObject.fieldPath ("spec.containers{web}", as the kubelet names a
// container); it never blocks.
func (r *Recorder) EventfAt(obj object.Object, fieldPath, eventtype, reason, messageFmt string, args ...any) {
	ev := r.makeEvent(obj, eventtype, reason, fmt.Sprintf(messageFmt, args...))
	ev.InvolvedObject.FieldPath = fieldPath
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		r.log.Warn("dropping event: recorder is shut down", "object", object.Key(obj), "reason", reason)
		return
	}
	w := r.workers[fnv32(objectKey(ev))%uint32(len(r.workers))]
	select {
	case w.queue <- ev:
	default:
		r.log.Warn("dropping event: the queue is full", "object", object.Key(obj), "reason", reason, "message", ev.GetMessage())
	}
}

// Shutdown writes the events already queued and stops the writer. Events
// recorded afterwards are dropped.
func (r *Recorder) Shutdown() {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		for _, w := range r.workers {
			close(w.queue)
		}
	}
	r.mu.Unlock()
	r.wg.Wait()
}

func (r *Recorder) makeEvent(obj object.Object, eventtype, reason, message string) *corev1.Event {
	now := r.clock.Now()
	r.mu.Lock()
	nano := max(now.UnixNano(), r.lastNano+1) // names stay unique within a nanosecond
	r.lastNano = nano
	r.mu.Unlock()
	ref := Reference(obj)
	ns := ref.GetNamespace()
	if ns == "" {
		ns = "default"
	}
	md := &metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", ref.GetName(), nano), Namespace: ns}
	if tp := obj.GetMetadata().GetAnnotations()[telemetry.TraceparentAnnotation]; tp != "" {
		md.Annotations = map[string]string{telemetry.TraceparentAnnotation: tp}
	}
	ts := &metav1.Time{Seconds: now.Unix()}
	return &corev1.Event{
		ApiVersion:         "v1",
		Kind:               "Event",
		Metadata:           md,
		InvolvedObject:     ref,
		Reason:             reason,
		Message:            message,
		Source:             &corev1.EventSource{Component: r.component, Host: r.host},
		FirstTimestamp:     ts,
		LastTimestamp:      ts,
		Count:              1,
		Type:               eventtype,
		ReportingComponent: r.component,
		ReportingInstance:  r.host,
	}
}

// Reference is the ObjectReference of obj: kind and apiVersion from the
// object or, when unset, from its proto type in the resource table.
func Reference(obj object.Object) *corev1.ObjectReference {
	md := obj.GetMetadata()
	apiVersion, kind := typeMeta(obj)
	if kind == "" {
		if res, ok := apis.ByMessage(string(obj.ProtoReflect().Descriptor().FullName())); ok {
			apiVersion, kind = res.Group.GroupVersion(), res.Kind
		}
	}
	return &corev1.ObjectReference{
		Kind:            kind,
		Namespace:       md.GetNamespace(),
		Name:            md.GetName(),
		Uid:             md.GetUid(),
		ApiVersion:      apiVersion,
		ResourceVersion: md.GetResourceVersion(),
	}
}

func typeMeta(obj object.Object) (apiVersion, kind string) {
	m := obj.ProtoReflect()
	fields := m.Descriptor().Fields()
	get := func(name protoreflect.Name) string {
		if fd := fields.ByName(name); fd != nil && fd.Kind() == protoreflect.StringKind {
			return m.Get(fd).String()
		}
		return ""
	}
	return get("api_version"), get("kind")
}

// aggregationKey identifies identical events, as Kubernetes' getEventKey does.
// objectKey names the object an event is about.
func objectKey(ev *corev1.Event) string {
	ref := ev.GetInvolvedObject()
	return ref.GetKind() + "\x00" + ref.GetNamespace() + "\x00" + ref.GetName() + "\x00" + ref.GetUid()
}

func aggregationKey(ev *corev1.Event) string {
	ref := ev.GetInvolvedObject()
	return ev.GetSource().GetComponent() + "\x00" + ev.GetSource().GetHost() + "\x00" +
		ref.GetKind() + "\x00" + ref.GetNamespace() + "\x00" + ref.GetName() + "\x00" + ref.GetUid() + "\x00" +
		ref.GetApiVersion() + "\x00" + ref.GetFieldPath() + "\x00" + ev.GetType() + "\x00" + ev.GetReason() + "\x00" + ev.GetMessage()
}

func (r *Recorder) run(w *worker) {
	for ev := range w.queue {
		r.write(w.cache, ev)
	}
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// write creates ev, or bumps the count of the identical event written before.
func (r *Recorder) write(cache *lru, ev *corev1.Event) {
	// The write carries the event's traceparent (the involved object's), so
	// a connection with an OpenTelemetry stats handler continues that trace
	// at the apiserver.
	ctx := telemetry.ContextFromObject(context.Background(), ev)
	key := aggregationKey(ev)
	if prev, ok := cache.get(key); ok {
		next := object.Copy(prev)
		next.Count = prev.GetCount() + 1
		next.LastTimestamp = ev.GetLastTimestamp()
		next.Metadata.ResourceVersion = ""
		ev = next
		out, err := r.retry(ctx, func(ctx context.Context) (*corev1.Event, error) { return r.events.Update(ctx, ev) })
		if err == nil {
			cache.add(key, out)
			return
		}
		if !apierrors.IsNotFound(err) {
			r.log.Error("could not update event", "event", object.Key(ev), "reason", ev.GetReason(), "err", err)
			return
		}
		// The earlier event is gone (expired or deleted): write it anew.
	}
	out, err := r.retry(ctx, func(ctx context.Context) (*corev1.Event, error) { return r.events.Create(ctx, ev) })
	if err != nil {
		r.log.Error("could not write event", "event", object.Key(ev), "reason", ev.GetReason(), "err", err)
		return
	}
	cache.add(key, out)
}

// retry calls f up to writeAttempts times while the error is transient.
func (r *Recorder) retry(parent context.Context, f func(ctx context.Context) (*corev1.Event, error)) (*corev1.Event, error) {
	var err error
	for i := range writeAttempts {
		if i > 0 {
			time.Sleep(r.retryWait)
		}
		ctx, cancel := context.WithTimeout(parent, writeTimeout)
		var out *corev1.Event
		out, err = f(ctx)
		cancel()
		if err == nil {
			return out, nil
		}
		if !transient(err) {
			return nil, err
		}
	}
	return nil, err
}

func transient(err error) bool {
	return apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.ReasonForError(err) == "InternalError"
}
