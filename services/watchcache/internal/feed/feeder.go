package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	"podline.dev/pkg/watchcache"
	"podline.dev/pkg/watchstream"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
)

// Timings of a Feeder; see Option.
const (
	// DefaultFirstWait is how long a new Feeder waits for the stream's
	// first message of its resource before it lists at the current
	// revision instead (an idle resource, or an empty stream).
	DefaultFirstWait = 2 * time.Second
	// DefaultFillTimeout bounds one backfill from the apiserver.
	DefaultFillTimeout = 10 * time.Second
	// fillQuiet ends a backfill up to a mark: the apiserver's watch sends
	// the history it holds at once, so a pause means it has sent it all.
	fillQuiet = 300 * time.Millisecond
)

// Feeder keeps one resource's cache current; Run is its only goroutine.
type Feeder struct {
	res       apis.Resource
	cache     *watchcache.Cache
	up        Upstream
	js        jetstream.JetStream
	newObj    func() object.Object
	firstWait time.Duration
	fillWait  time.Duration

	// Owned by Run.
	based     bool
	epoch     string // "" when the next message's number is unknown
	nextSeq   uint64
	streamSeq uint64 // the stream sequence of the last message handled

	syncOnce sync.Once
	synced   chan struct{}
	current  atomic.Bool   // the cache is known to be complete to the stream and the apiserver
	resync   chan struct{} // Resync's request to Run, at most one pending
	stats    counters
}

// errResync ends a consume that Resync interrupted.
var errResync = errors.New("feed: resync requested")

// Stats counts what a Feeder did.
type Stats struct {
	Messages, Applied, Skipped, Fills, Filled, Relists uint64
	// CatchUps counts resyncs completed (after Resync or a failed feed).
	CatchUps uint64
	// Lag is publish-to-apply delay of the last event applied.
	Lag time.Duration
}

type counters struct {
	messages, applied, skipped, fills, filled, relists, catchUps atomic.Uint64
	lag                                                          atomic.Int64
}

// Option configures a Feeder.
type Option func(*Feeder)

// WithFirstWait sets how long a new Feeder waits for its first message.
func WithFirstWait(d time.Duration) Option { return func(f *Feeder) { f.firstWait = d } }

// New returns the feeder of res's cache, reading js and asking up.
func New(res apis.Resource, cache *watchcache.Cache, up Upstream, js jetstream.JetStream, opts ...Option) (*Feeder, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(res.Message()))
	if err != nil {
		return nil, fmt.Errorf("feed: %s: %w", res.Message(), err)
	}
	f := &Feeder{
		res: res, cache: cache, up: up, js: js,
		newObj:    func() object.Object { return mt.New().Interface().(object.Object) },
		firstWait: DefaultFirstWait, fillWait: DefaultFillTimeout,
		synced: make(chan struct{}), resync: make(chan struct{}, 1),
	}
	for _, o := range opts {
		o(f)
	}
	return f, nil
}

// Synced is closed once the cache holds its first state.
func (f *Feeder) Synced() <-chan struct{} { return f.synced }

// Current reports whether the cache is known to be complete: it holds its
// first state, and since the last Resync or failure of the feed a new
// consumer runs and the cache has caught up with the apiserver. A
// replica serves only from current caches.
func (f *Feeder) Current() bool { return f.current.Load() }

// Resync makes the cache not current at once and Run start over: a new
// consumer from the last message handled, then a catch-up from the
// apiserver to its current revision (the events the publisher could not
// publish while NATS was unreachable, which no later message may
// announce). A replica calls it when it lost NATS, and again when NATS is
// back, so that Run does not sit out a backoff.
func (f *Feeder) Resync() {
	f.current.Store(false)
	select {
	case f.resync <- struct{}{}:
	default:
	}
}

// Stats returns the feeder's counters.
func (f *Feeder) Stats() Stats {
	c := &f.stats
	return Stats{Messages: c.messages.Load(), Applied: c.applied.Load(), Skipped: c.skipped.Load(),
		Fills: c.fills.Load(), Filled: c.filled.Load(), Relists: c.relists.Load(), CatchUps: c.catchUps.Load(), Lag: time.Duration(c.lag.Load())}
}

// Run feeds the cache until ctx ends, starting over (from the last message
// it handled) when the consumer or the apiserver fails, or Resync asks.
// The cache is not current from a failure until the new consumer caught up.
func (f *Feeder) Run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := f.consume(ctx)
		if ctx.Err() != nil {
			return
		}
		f.current.Store(false)
		if errors.Is(err, errResync) {
			backoff = 100 * time.Millisecond
			continue
		}
		slog.Warn("watchcache: feed restarts", "resource", f.res.GroupResource(), "err", err)
		select {
		case <-ctx.Done():
			return
		case <-f.resync:
			backoff = 100 * time.Millisecond
			continue
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (f *Feeder) consume(parent context.Context) error {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	go func() {
		select {
		case <-f.resync:
			cancel(errResync)
		case <-ctx.Done():
		}
	}()
	err := f.consumeUntil(ctx)
	if cause := context.Cause(ctx); errors.Is(cause, errResync) {
		return cause
	}
	return err
}

// consumeUntil reads a new consumer's messages until ctx ends or handling
// one fails. A cache that is not current first catches up.
func (f *Feeder) consumeUntil(ctx context.Context) error {
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{watchstream.ResourceFilter(f.res)},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	}
	if f.streamSeq > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, f.streamSeq+1
	}
	cons, err := f.js.OrderedConsumer(ctx, watchstream.StreamName, cfg)
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	defer context.AfterFunc(ctx, it.Stop)()
	if f.based && !f.current.Load() {
		if err := f.catchUp(ctx); err != nil {
			return err
		}
	}
	for {
		var opts []jetstream.NextOpt
		if !f.based {
			opts = append(opts, jetstream.NextMaxWait(f.firstWait))
		}
		msg, err := it.Next(opts...)
		if err != nil {
			if !f.based && errors.Is(err, nats.ErrTimeout) {
				// Nothing published for this resource: start from now.
				if err := f.relist(ctx); err != nil {
					return err
				}
				continue
			}
			return err
		}
		f.stats.messages.Add(1)
		if meta, err := msg.Metadata(); err == nil {
			f.streamSeq = meta.Sequence.Stream
		}
		var m watchstream.Message
		if err := m.Unmarshal(msg.Data()); err != nil {
			// The sequence check turns the unreadable message into a gap.
			slog.Error("watchcache: unreadable message", "subject", msg.Subject(), "err", err)
			continue
		}
		if err := f.handle(ctx, &m, msg.Headers().Get(watchstream.TraceparentHeader)); err != nil {
			return err
		}
	}
}

// handle applies one message, first filling any gap before it.
func (f *Feeder) handle(ctx context.Context, m *watchstream.Message, traceparent string) error {
	switch {
	case !f.based:
		if err := f.base(ctx, m); err != nil {
			return err
		}
	case m.Epoch != f.epoch || m.Sequence != f.nextSeq:
		if err := f.fill(ctx, m); err != nil {
			return err
		}
	}
	f.epoch, f.nextSeq = m.Epoch, m.Sequence+1
	switch m.Kind {
	case watchstream.KindEvent:
		return f.apply(ctx, m, traceparent)
	case watchstream.KindProgress:
		f.cache.Progress(m.Revision)
	case watchstream.KindReset:
		// The publisher relisted at m.Revision: what it missed before is
		// not in the stream. Fill from the apiserver (or relist).
		if f.cache.Revision() < m.Revision {
			f.epoch = ""
			if err := f.fill(ctx, m); err != nil {
				return err
			}
			f.epoch = m.Epoch
		}
	}
	return nil
}

// base gives the cache its first state: the list exactly before m, so the
// stream's window replays into the cache's history; at the current
// revision when etcd no longer has that one.
func (f *Feeder) base(ctx context.Context, m *watchstream.Message) error {
	rev := need(m)
	items, lm, err := f.up.List(ctx, exactAt(rev))
	if err != nil {
		slog.Info("watchcache: cannot list at the stream's first revision; listing now", "resource", f.res.GroupResource(), "revision", rev, "err", err)
		if err := f.relist(ctx); err != nil {
			return err
		}
		return f.fill(ctx, m)
	}
	if lm.GetResourceVersion() != strconv.FormatInt(rev, 10) {
		return fmt.Errorf("list exactly at %d answered %q", rev, lm.GetResourceVersion())
	}
	f.replace(items, rev)
	return nil
}

// relist replaces the cache with the apiserver's current state. The next
// message's number is unknown after it.
func (f *Feeder) relist(ctx context.Context) error {
	items, lm, err := f.up.List(ctx, &metav1.ListRequest{})
	if err != nil {
		return fmt.Errorf("relist: %w", err)
	}
	rev, err := strconv.ParseInt(lm.GetResourceVersion(), 10, 64)
	if err != nil {
		return fmt.Errorf("relist: resourceVersion %q: %w", lm.GetResourceVersion(), err)
	}
	f.stats.relists.Add(1)
	f.replace(items, rev)
	f.epoch = ""
	return nil
}

func (f *Feeder) replace(items []object.Object, rev int64) {
	f.cache.Replace(items, rev)
	f.based = true
	f.syncOnce.Do(func() {
		f.current.Store(true)
		close(f.synced)
	})
}

// catchUp brings the cache to the apiserver's current revision, filling
// from its watch (or relisting), and makes it current. Messages of the
// stream at or below that revision are then skipped.
func (f *Feeder) catchUp(ctx context.Context) error {
	_, lm, err := f.up.List(ctx, &metav1.ListRequest{Limit: 1})
	if err != nil {
		return fmt.Errorf("catch up: %w", err)
	}
	rev, err := strconv.ParseInt(lm.GetResourceVersion(), 10, 64)
	if err != nil {
		return fmt.Errorf("catch up: resourceVersion %q: %w", lm.GetResourceVersion(), err)
	}
	if err := f.fill(ctx, &watchstream.Message{Kind: watchstream.KindProgress, Revision: rev}); err != nil {
		return err
	}
	f.cache.Progress(rev)
	f.stats.catchUps.Add(1)
	f.current.Store(true)
	return nil
}

// need is the revision the cache must be complete to before m applies.
func need(m *watchstream.Message) int64 {
	if m.Kind == watchstream.KindEvent {
		return m.Revision - 1
	}
	return m.Revision
}

// fill applies, from an apiserver watch, the events between the cache's
// revision and m's: the hole that m's unexpected number announced. It
// relists when the apiserver cannot replay from there.
func (f *Feeder) fill(ctx context.Context, m *watchstream.Message) error {
	target := need(m)
	from := f.cache.Revision()
	if from >= target {
		return nil
	}
	f.stats.fills.Add(1)
	wctx, cancel := context.WithTimeout(ctx, f.fillWait)
	defer cancel()
	w, err := f.up.Watch(wctx, &metav1.ListRequest{ResourceVersion: strconv.FormatInt(from, 10), AllowWatchBookmarks: true})
	if err != nil {
		slog.Info("watchcache: cannot fill the gap from the apiserver; relisting", "resource", f.res.GroupResource(), "from", from, "err", err)
		return f.relist(ctx)
	}
	defer w.Stop()
	quiet := time.NewTimer(f.fillWait)
	defer quiet.Stop()
	for f.cache.Revision() < target {
		if m.Kind != watchstream.KindEvent {
			quiet.Reset(fillQuiet)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-quiet.C:
			if m.Kind == watchstream.KindEvent {
				slog.Info("watchcache: fill timed out; relisting", "resource", f.res.GroupResource(), "from", from, "target", target)
				return f.relist(ctx)
			}
			// Everything the apiserver held past from has come (see fillQuiet).
			return nil
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				slog.Info("watchcache: fill ended early; relisting", "resource", f.res.GroupResource(), "from", from, "err", ev.Err)
				return f.relist(ctx)
			}
			rev, err := strconv.ParseInt(ev.Object.GetMetadata().GetResourceVersion(), 10, 64)
			if err != nil {
				return fmt.Errorf("fill: resourceVersion %q: %w", ev.Object.GetMetadata().GetResourceVersion(), err)
			}
			if ev.Type == watch.Bookmark {
				if rev >= target {
					return nil // the apiserver had nothing more up to target
				}
				continue
			}
			if rev > target {
				return nil
			}
			if rev <= f.cache.Revision() {
				continue
			}
			if err := f.cache.Apply(watchcache.Event{Type: ev.Type, Object: ev.Object, Revision: rev}); err != nil {
				return err
			}
			f.stats.filled.Add(1)
		}
	}
	return nil
}

// apply hands one event to the cache, and so to every watcher it concerns,
// under a span that continues the object's trace.
func (f *Feeder) apply(ctx context.Context, m *watchstream.Message, traceparent string) error {
	if m.Revision <= f.cache.Revision() {
		f.stats.skipped.Add(1)
		return nil
	}
	if traceparent != "" {
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
	}
	_, span := otel.Tracer("watchcache").Start(ctx, "watchcache.FanOut", trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.String("resource", f.res.GroupResource()), attribute.Int64("revision", m.Revision)))
	defer span.End()
	obj := f.newObj()
	if err := proto.Unmarshal(m.Object, obj); err != nil {
		// Unreadable: make the next message look like a gap, so the
		// event is filled from the apiserver instead.
		span.RecordError(err)
		f.epoch = ""
		return nil
	}
	if err := f.cache.Apply(watchcache.Event{Type: watch.EventType(m.Type), Object: obj, Revision: m.Revision}); err != nil {
		return err
	}
	f.stats.applied.Add(1)
	if m.Published > 0 {
		f.stats.lag.Store(time.Now().UnixNano() - m.Published)
	}
	return nil
}

func exactAt(rev int64) *metav1.ListRequest {
	return &metav1.ListRequest{ResourceVersion: strconv.FormatInt(rev, 10), ResourceVersionMatch: "Exact"}
}
