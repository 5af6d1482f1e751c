package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	metav1 "podline.dev/proto/meta/v1"
)

// ReflectorStore is what a Reflector writes the watched state into: a
// Store, or a DeltaFIFO in front of an informer's Indexer.
type ReflectorStore interface {
	Add(obj object.Object) error
	Update(obj object.Object) error
	Delete(obj object.Object) error
	Replace(list []object.Object, resourceVersion string) error
	Resync() error
}

// Reflector keeps a ReflectorStore equal to one resource on the apiserver:
// it lists, replaces the store with the result, and watches from the list's
// resourceVersion, applying each event. When a watch ends (a timeout, a
// dropped connection, an error) it watches again from the last
// resourceVersion it saw, bookmarks included, without relisting; only a 410
// (the revision was compacted) makes it list again. Failures are retried
// after a jittered exponential backoff.
type Reflector struct {
	name         string
	lw           ListerWatcher
	store        ReflectorStore
	expectedType protoreflect.FullName
	clock        clock.Clock
	backoff      backoffState
	resyncPeriod time.Duration
	pageSize     int64
	listTemplate *metav1.ListRequest
	watchTimeout time.Duration
	log          *slog.Logger

	mu                      sync.RWMutex
	lastSyncResourceVersion string
}

// ReflectorOption configures a Reflector.
type ReflectorOption func(*Reflector)

// WithName names the reflector in logs, e.g. the resource it watches.
func WithName(name string) ReflectorOption { return func(r *Reflector) { r.name = name } }

// WithExpectedType makes the reflector reject objects of another type than exemplar's.
func WithExpectedType(exemplar object.Object) ReflectorOption {
	return func(r *Reflector) {
		if exemplar != nil {
			r.expectedType = typeName(exemplar)
		}
	}
}

// WithClock sets the clock for backoff waits and resync (default clock.Real).
func WithClock(c clock.Clock) ReflectorOption { return func(r *Reflector) { r.clock = c } }

// WithBackoff sets the wait between failed attempts (default DefaultBackoff).
func WithBackoff(b Backoff) ReflectorOption {
	return func(r *Reflector) { r.backoff = backoffState{Backoff: b} }
}

// WithResyncPeriod makes the reflector call the store's Resync every d (default never).
func WithResyncPeriod(d time.Duration) ReflectorOption {
	return func(r *Reflector) { r.resyncPeriod = d }
}

// WithPageSize lists in pages of n objects when the ListerWatcher is a ListPager.
func WithPageSize(n int64) ReflectorOption { return func(r *Reflector) { r.pageSize = n } }

// WithListOptions sets the request every list and watch starts from, such
// as a label or field selector; the reflector fills in its own fields.
func WithListOptions(template *metav1.ListRequest) ReflectorOption {
	return func(r *Reflector) { r.listTemplate = template }
}

// WithWatchTimeout sets the shortest server-side timeout asked for a watch;
// each watch asks for a random time between d and 2d, so that many clients
// do not reconnect in step (default 5 minutes).
func WithWatchTimeout(d time.Duration) ReflectorOption {
	return func(r *Reflector) { r.watchTimeout = d }
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) ReflectorOption { return func(r *Reflector) { r.log = l } }

// NewReflector returns a Reflector from lw into store; Run starts it.
func NewReflector(lw ListerWatcher, store ReflectorStore, opts ...ReflectorOption) *Reflector {
	r := &Reflector{
		name:         "reflector",
		lw:           lw,
		store:        store,
		clock:        clock.Real{},
		backoff:      backoffState{Backoff: DefaultBackoff},
		watchTimeout: 5 * time.Minute,
		log:          slog.Default(),
	}
	for _, o := range opts {
		o(r)
	}
	r.log = r.log.With("reflector", r.name)
	return r
}

// LastSyncResourceVersion is the resourceVersion of the last list, event or
// bookmark applied: where the next watch resumes.
func (r *Reflector) LastSyncResourceVersion() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.lastSyncResourceVersion
}

func (r *Reflector) setLastSyncResourceVersion(rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastSyncResourceVersion = rv
}

// Run lists and watches until ctx is done, backing off after failures.
func (r *Reflector) Run(ctx context.Context) {
	r.log.Debug("starting")
	var wg sync.WaitGroup
	defer wg.Wait()
	if r.resyncPeriod > 0 {
		wg.Go(func() { r.resyncLoop(ctx) })
	}
	for {
		err := r.ListAndWatch(ctx)
		if ctx.Err() != nil {
			r.log.Debug("stopped")
			return
		}
		wait := r.backoff.next(r.clock.Now())
		if apierrors.IsTooOld(err) {
			r.log.Info("watched revision is gone; relisting", "err", err, "after", wait)
		} else {
			r.log.Warn("list and watch failed", "err", err, "retryAfter", wait)
		}
		if !r.sleep(ctx, wait) {
			return
		}
	}
}

// ListAndWatch lists once, then watches until a relist is needed (it
// returns the 410 error) or ctx is done. It always returns a non-nil error.
func (r *Reflector) ListAndWatch(ctx context.Context) error {
	if err := r.list(ctx); err != nil {
		return fmt.Errorf("list: %w", err)
	}
	return r.watch(ctx)
}

func (r *Reflector) list(ctx context.Context) error {
	// An empty resourceVersion asks for the latest state, read consistently.
	opts := r.request()
	items, rv, err := r.doList(ctx, opts)
	if err != nil {
		return err
	}
	for _, item := range items {
		if err := r.checkType(item); err != nil {
			return err
		}
	}
	if err := r.store.Replace(items, rv); err != nil {
		return fmt.Errorf("replace the store with %d listed objects: %w", len(items), err)
	}
	r.setLastSyncResourceVersion(rv)
	r.log.Debug("listed", "objects", len(items), "resourceVersion", rv)
	return nil
}

func (r *Reflector) doList(ctx context.Context, opts *metav1.ListRequest) ([]object.Object, string, error) {
	pager, ok := r.lw.(ListPager)
	if r.pageSize <= 0 || !ok {
		return r.lw.List(ctx, opts)
	}
	var all []object.Object
	var snapshot string
	page := proto.Clone(opts).(*metav1.ListRequest)
	page.Limit = r.pageSize
	for {
		items, rv, next, err := pager.ListPage(ctx, page)
		if err != nil {
			if page.Continue != "" && apierrors.IsTooOld(err) {
				// The snapshot behind the continue token was compacted: list in one piece.
				r.log.Info("paged list expired; listing in one call", "err", err)
				return r.lw.List(ctx, opts)
			}
			return nil, "", err
		}
		if snapshot == "" {
			snapshot = rv
		}
		all = append(all, items...)
		if next == "" {
			return all, snapshot, nil
		}
		page.Continue = next
		page.ResourceVersion = "" // the continue token carries it
	}
}

// watch watches from the last resourceVersion again and again. It returns
// a 410 error when a relist is needed, or ctx's error.
func (r *Reflector) watch(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rv := r.LastSyncResourceVersion()
		start := r.clock.Now()
		events, err := r.watchOnce(ctx, rv)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case apierrors.IsTooOld(err):
			return fmt.Errorf("watch from resourceVersion %s: %w", rv, err)
		case err != nil:
			wait := r.backoff.next(r.clock.Now())
			r.log.Warn("watch failed; resuming from the last resourceVersion",
				"resourceVersion", r.LastSyncResourceVersion(), "err", err, "retryAfter", wait)
			if !r.sleep(ctx, wait) {
				return ctx.Err()
			}
		case events == 0 && r.clock.Since(start) < time.Second:
			// A stream that closes at once with nothing in it is a failure in
			// disguise; don't spin on it.
			wait := r.backoff.next(r.clock.Now())
			r.log.Warn("watch closed at once with no events", "resourceVersion", rv, "retryAfter", wait)
			if !r.sleep(ctx, wait) {
				return ctx.Err()
			}
		default:
			r.log.Debug("watch ended; resuming", "resourceVersion", r.LastSyncResourceVersion(), "events", events)
		}
	}
}

// watchOnce runs one watch stream to its end, applying its events. It
// returns how many events it applied and why the stream ended: nil for a
// clean close, the error of the Watch call or of an ERROR event.
func (r *Reflector) watchOnce(ctx context.Context, rv string) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := r.request()
	opts.ResourceVersion = rv
	opts.Watch = true
	opts.AllowWatchBookmarks = true
	timeout := int64((r.watchTimeout + time.Duration(rand.Float64()*float64(r.watchTimeout))) / time.Second)
	opts.TimeoutSeconds = &timeout

	w, err := r.lw.Watch(ctx, opts)
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	applied := 0
	for {
		select {
		case <-ctx.Done():
			return applied, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return applied, nil
			}
			if ev.Type == watch.Error {
				if ev.Err == nil {
					return applied, errors.New("watch sent an ERROR event without an error")
				}
				return applied, ev.Err
			}
			if r.apply(ev) {
				applied++
			}
		}
	}
}

// apply writes one event to the store and advances the resourceVersion.
func (r *Reflector) apply(ev watch.Event) bool {
	if ev.Object == nil || ev.Object.GetMetadata() == nil {
		r.log.Error("watch event without an object; skipped", "type", ev.Type)
		return false
	}
	if err := r.checkType(ev.Object); err != nil {
		r.log.Error("skipped watch event", "type", ev.Type, "err", err)
		return false
	}
	var err error
	switch ev.Type {
	case watch.Added:
		err = r.store.Add(ev.Object)
	case watch.Modified:
		err = r.store.Update(ev.Object)
	case watch.Deleted:
		err = r.store.Delete(ev.Object)
	case watch.Bookmark:
	default:
		r.log.Error("watch event of unknown type; skipped", "type", ev.Type)
		return false
	}
	if err != nil {
		r.log.Error("could not apply watch event", "type", ev.Type, "key", object.Key(ev.Object), "err", err)
	}
	if rv := ev.Object.GetMetadata().GetResourceVersion(); rv != "" {
		r.setLastSyncResourceVersion(rv)
	}
	return true
}

func (r *Reflector) checkType(obj object.Object) error {
	if r.expectedType == "" {
		return nil
	}
	if got := typeName(obj); got != r.expectedType {
		return fmt.Errorf("expected %s, got %s", r.expectedType, got)
	}
	return nil
}

func (r *Reflector) request() *metav1.ListRequest {
	if r.listTemplate == nil {
		return &metav1.ListRequest{}
	}
	req := proto.Clone(r.listTemplate).(*metav1.ListRequest)
	req.ResourceVersion, req.Limit, req.Continue, req.Watch = "", 0, "", false
	return req
}

func (r *Reflector) resyncLoop(ctx context.Context) {
	for r.sleep(ctx, r.resyncPeriod) {
		if err := r.store.Resync(); err != nil {
			r.log.Error("resync failed", "err", err)
		}
	}
}

// sleep waits d on the reflector's clock; it reports false if ctx ended first.
func (r *Reflector) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

func typeName(obj object.Object) protoreflect.FullName {
	return obj.ProtoReflect().Descriptor().FullName()
}
