package watchcache

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
)

// Event is one change from the event source (the apiserver's etcd watch
// of the resource), in revision order.
type Event struct {
	Type watch.EventType // Added, Modified or Deleted
	// Object is the new state; for Deleted, the last state with
	// resourceVersion set to the delete's revision.
	Object object.Object
	// PrevObject is the previous state as the source saw it (nil for
	// Added). The cache decides filter transitions from its own state of
	// the key, as kube-apiserver's watch cache does, so that they agree
	// with what its watchers were sent; PrevObject is informative.
	PrevObject object.Object
	// Revision is the etcd mod revision of this change.
	Revision int64
}

// Cache is the watch cache of one resource. All methods are safe for
// concurrent use. Objects it hands out (from List and in watch events) are
// shared by every caller and must be treated as read-only: copy one with
// object.Copy before changing it. The cache never changes an object it has
// been given.
type Cache struct {
	cfg config

	// applyMu serializes Apply (revisions must increase anyway) so that it
	// can reuse wake, the watchers to wake once mu is released.
	applyMu sync.Mutex
	wake    []*watcher

	mu          sync.RWMutex
	initialized bool
	rev         int64 // everything up to rev has been applied
	oldest      int64 // the oldest revision a watch may start from
	store       map[string]object.Object
	ring        ring
	watchers    map[*watcher]struct{}
	// untriggered and triggered partition watchers: by trigger value for
	// those whose filter is Triggered, when the cache has a trigger.
	untriggered map[*watcher]struct{}
	triggered   map[string]map[*watcher]struct{}
	// advanced is closed (and cleared) when rev moves; nil while no one waits.
	advanced chan struct{}
	exemplar exemplar

	applied, bookmarksSent, slowDropped uint64
	queued                              uint64
}

// Metrics is a snapshot of the cache's state and counters, for the
// apiserver's /metrics.
type Metrics struct {
	Revision       int64 // Revision()
	OldestRevision int64 // the oldest revision a watch may start from
	Objects        int   // objects in the current state
	Events         int   // events in the ring
	Watchers       int   // running watches

	EventsApplied       uint64 // events accepted by Apply
	EventsQueued        uint64 // watch events (not bookmarks) handed to watchers by Apply
	BookmarksSent       uint64 // bookmarks handed to watchers
	SlowWatchersDropped uint64 // watchers closed because their buffer was full
}

// New returns an empty cache. It serves nothing (Watch and WaitUntilFresh
// wait, List returns revision 0) until the first Replace.
func New(opts ...Option) *Cache {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	c := &Cache{
		cfg:      cfg,
		store:    map[string]object.Object{},
		ring:     newRing(cfg.capacity),
		watchers: map[*watcher]struct{}{},

		untriggered: map[*watcher]struct{}{},
		triggered:   map[string]map[*watcher]struct{}{},
	}
	if cfg.exemplar != nil {
		c.exemplar.set(cfg.exemplar)
	}
	return c
}

// Replace makes objs at revision the whole state, as after the source's
// initial list or a relist. A relist means the source lost track of changes
// between its last event and revision, so the history is gone too: the
// ring is emptied (a watch may start from revision or later), and every
// running watch is closed without an error event, as kube-apiserver does
// when its cacher reinitializes. Clients resume from their last revision;
// one older than revision gets 410 Expired and relists.
func (c *Cache) Replace(objs []object.Object, revision int64) {
	store := make(map[string]object.Object, len(objs))
	for _, o := range objs {
		store[object.Key(o)] = o
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(objs) > 0 {
		c.exemplar.setIfEmpty(objs[0])
	}
	for w := range c.watchers {
		c.removeLocked(w)
		w.stop()
	}
	c.store = store
	c.ring.reset()
	c.rev, c.oldest = revision, revision
	c.initialized = true
	c.advanceLocked()
}

// Apply records one change and hands it to every watcher it concerns. It
// never blocks on a watcher: a watcher whose buffer is full is closed (its
// client resumes from the last revision it received). Revisions must
// increase; an event at or below Revision() is ErrOutOfOrder and changes
// nothing.
func (c *Cache) Apply(ev Event) error {
	switch ev.Type {
	case watch.Added, watch.Modified, watch.Deleted:
	default:
		return fmt.Errorf("%w: type %q", ErrInvalidEvent, ev.Type)
	}
	if ev.Object == nil {
		return fmt.Errorf("%w: %s at revision %d has no object", ErrInvalidEvent, ev.Type, ev.Revision)
	}
	key := object.Key(ev.Object)

	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	if err := c.applyLocked(key, ev); err != nil {
		return err
	}
	for i, w := range c.wake {
		w.wake()
		c.wake[i] = nil
	}
	c.wake = c.wake[:0]
	return nil
}

// applyLocked records ev and queues it for the watchers it concerns,
// collecting in c.wake those to wake. Called with applyMu held.
func (c *Cache) applyLocked(key string, ev Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.initialized {
		return ErrNotInitialized
	}
	if ev.Revision <= c.rev {
		return fmt.Errorf("%w: %s %q at revision %d, cache is at %d", ErrOutOfOrder, ev.Type, key, ev.Revision, c.rev)
	}
	c.exemplar.setIfEmpty(ev.Object)
	prev := c.store[key]
	if ev.Type == watch.Deleted {
		delete(c.store, key)
	} else {
		c.store[key] = ev.Object
	}
	e, evicted, didEvict := c.ring.push(entry{typ: ev.Type, obj: ev.Object, prev: prev, rev: ev.Revision})
	if didEvict {
		c.oldest = evicted
	}
	c.rev = ev.Revision
	c.applied++
	c.advanceLocked()

	now := c.cfg.clock.Now()
	bm := bookmarkOnce{cache: c}
	deliver := func(w *watcher) {
		wev, ok := e.convert(w.filter)
		if !ok {
			c.maybeBookmarkLocked(w, now, &bm)
			return
		}
		if !w.push(wev) {
			c.dropSlowLocked(w)
			return
		}
		c.wake = append(c.wake, w)
		c.queued++
		w.sentRev, w.lastSent = e.rev, now
	}
	if c.cfg.trigger == nil {
		for w := range c.watchers {
			deliver(w)
		}
		return nil
	}
	// Watchers of other trigger values cannot match this change; they get
	// their bookmarks from Tick and Progress.
	for w := range c.untriggered {
		deliver(w)
	}
	val := c.cfg.trigger(ev.Object)
	for w := range c.triggered[val] {
		deliver(w)
	}
	if prev != nil {
		if pv := c.cfg.trigger(prev); pv != val {
			for w := range c.triggered[pv] {
				deliver(w)
			}
		}
	}
	return nil
}

// Progress tells the cache the source has seen everything up to revision
// (an etcd progress notification): Revision() advances without an event,
// so waiters wake and idle watchers may get a bookmark. A revision at or
// below Revision() is ignored.
func (c *Cache) Progress(revision int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.initialized || revision <= c.rev {
		return
	}
	c.rev = revision
	c.advanceLocked()
	c.bookmarksLocked()
}

// Tick sends due bookmarks to idle watchers. The apiserver calls it on a
// ticker (Kubernetes checks every second); Apply and Progress also do.
func (c *Cache) Tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bookmarksLocked()
}

// Revision is the revision the cache is current to.
func (c *Cache) Revision() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rev
}

// List returns the objects that match f, sorted by key, and the revision
// they are the state at. Before the first Replace it returns nothing at
// revision 0; callers that must not serve that wait with WaitUntilFresh.
func (c *Cache) List(f Filter) (objs []object.Object, revision int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	keyed := c.matchingLocked(f)
	objs = make([]object.Object, len(keyed))
	for i, k := range keyed {
		objs[i] = k.obj
	}
	return objs, c.rev
}

// Get returns the object under key (object.KeyOf(namespace, name)), shared
// and read-only like List's, and the revision the cache is at.
func (c *Cache) Get(key string) (obj object.Object, revision int64, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	obj, ok = c.store[key]
	return obj, c.rev, ok
}

type keyed struct {
	key string
	obj object.Object
}

func (c *Cache) matchingLocked(f Filter) []keyed {
	var out []keyed
	all := f.matchesAll()
	for k, o := range c.store {
		if all || f.Matches(o) {
			out = append(out, keyed{k, o})
		}
	}
	slices.SortFunc(out, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	return out
}

// WaitUntilFresh blocks until the cache is initialized and Revision() is at
// least revision. It gives up when ctx ends (ctx.Err()) or, with a fresh
// timeout set, when that passes on the cache's clock: then it returns
// Kubernetes' 504 "Too large resource version" (or 429 "storage is
// (re)initializing" before the first Replace), which clients retry.
func (c *Cache) WaitUntilFresh(ctx context.Context, revision int64) error {
	var timer clock.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	var timeout <-chan time.Time // nil, and so never ready, without a fresh timeout
	for {
		c.mu.Lock()
		if c.initialized && c.rev >= revision {
			c.mu.Unlock()
			return nil
		}
		if c.advanced == nil {
			c.advanced = make(chan struct{})
		}
		advanced, initialized, current := c.advanced, c.initialized, c.rev
		c.mu.Unlock()

		if timer == nil && c.cfg.freshTimeout > 0 {
			timer = c.cfg.clock.NewTimer(c.cfg.freshTimeout)
			timeout = timer.C()
		}
		select {
		case <-advanced:
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout:
			if !initialized {
				return apierrors.NewTooManyRequests("storage is (re)initializing", 1)
			}
			return tooLargeResourceVersion(revision, current)
		}
	}
}

// tooLargeResourceVersion is kube-apiserver's storage.NewTooLargeResourceVersionError.
func tooLargeResourceVersion(want, current int64) error {
	err := apierrors.NewTimeout(fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", want, current), 1)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, resourceVersionTooLargeCause())
	return err
}

// Watch starts a watch of the objects that match f.
//
// With fromRevision > 0 the watch delivers every change after fromRevision,
// in order, exactly once, then live changes. A fromRevision the cache has
// not reached yet is waited for (see WaitUntilFresh); one older than the
// history the cache still holds is 410 Expired, "too old resource version:
// <from> (<oldest>)", where oldest is the oldest revision a watch may start
// from. With fromRevision == 0 the watch first sends an ADDED for every
// matching object (sorted by key), then the changes after Revision().
//
// With bookmarks, an idle watcher gets a BOOKMARK (an empty object of the
// resource's type with only metadata.resourceVersion set) at most every
// bookmark interval, when the revision has moved past what it was last
// told.
//
// The watch ends when ctx ends, on Stop, when the client falls more than
// the watcher buffer behind, and on Replace; its result channel is then
// closed.
func (c *Cache) Watch(ctx context.Context, fromRevision int64, f Filter, bookmarks bool) (watch.Interface, error) {
	if fromRevision < 0 {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resource version: %d", fromRevision))
	}
	for {
		if err := c.WaitUntilFresh(ctx, fromRevision); err != nil {
			return nil, err
		}
		c.mu.Lock()
		// A Replace at an older revision may have come in between.
		if c.initialized && c.rev >= fromRevision {
			break
		}
		c.mu.Unlock()
	}
	defer c.mu.Unlock()
	if fromRevision > 0 && fromRevision < c.oldest {
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", fromRevision, c.oldest))
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	w := &watcher{
		cache:     c,
		filter:    f,
		bookmarks: bookmarks,
		result:    make(chan watch.Event),
		done:      make(chan struct{}),
		limit:     c.cfg.watcherBuffer,
		notify:    make(chan struct{}, 1),
		sentRev:   fromRevision,
		lastSent:  c.cfg.clock.Now(),
	}
	if fromRevision == 0 {
		w.sentRev = c.rev
		for _, k := range c.matchingLocked(f) {
			w.initial = append(w.initial, watch.Event{Type: watch.Added, Object: k.obj})
		}
	} else {
		for i := c.ring.after(fromRevision); i < c.ring.len(); i++ {
			e := c.ring.at(i)
			if ev, ok := e.convert(f); ok {
				w.initial = append(w.initial, ev)
				w.sentRev = e.rev
			}
		}
	}
	c.addLocked(w)
	w.unhookCtx = context.AfterFunc(ctx, w.Stop)
	go w.run()
	return w, nil
}

// Metrics returns a snapshot of the cache's state and counters.
func (c *Cache) Metrics() Metrics {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return Metrics{
		Revision:            c.rev,
		OldestRevision:      c.oldest,
		Objects:             len(c.store),
		Events:              c.ring.len(),
		Watchers:            len(c.watchers),
		EventsApplied:       c.applied,
		EventsQueued:        c.queued,
		BookmarksSent:       c.bookmarksSent,
		SlowWatchersDropped: c.slowDropped,
	}
}

// forget removes w from the watchers Apply serves.
func (c *Cache) forget(w *watcher) {
	c.mu.Lock()
	c.removeLocked(w)
	c.mu.Unlock()
}

// addLocked registers w, indexed by its trigger value when it has one.
func (c *Cache) addLocked(w *watcher) {
	c.watchers[w] = struct{}{}
	if c.cfg.trigger == nil || !w.filter.Triggered {
		c.untriggered[w] = struct{}{}
		return
	}
	set := c.triggered[w.filter.Trigger]
	if set == nil {
		set = map[*watcher]struct{}{}
		c.triggered[w.filter.Trigger] = set
	}
	set[w] = struct{}{}
}

// removeLocked unregisters w; removing it again does nothing.
func (c *Cache) removeLocked(w *watcher) {
	delete(c.watchers, w)
	delete(c.untriggered, w)
	if set := c.triggered[w.filter.Trigger]; set != nil {
		delete(set, w)
		if len(set) == 0 {
			delete(c.triggered, w.filter.Trigger)
		}
	}
}

// dropSlowLocked closes a watcher whose buffer is full. Kubernetes closes
// such a watch without an error event, so that the client resumes from its
// last revision instead of relisting; so does this.
func (c *Cache) dropSlowLocked(w *watcher) {
	c.removeLocked(w)
	w.stop()
	c.slowDropped++
}

// advanceLocked wakes everything waiting for the revision to move.
func (c *Cache) advanceLocked() {
	if c.advanced != nil {
		close(c.advanced)
		c.advanced = nil
	}
}

func (c *Cache) bookmarksLocked() {
	now := c.cfg.clock.Now()
	bm := bookmarkOnce{cache: c}
	for w := range c.watchers {
		c.maybeBookmarkLocked(w, now, &bm)
	}
}

// maybeBookmarkLocked queues a bookmark at Revision() for w if it asked for
// bookmarks, has been told of nothing for a bookmark interval, and the
// revision has moved since. A full buffer skips the bookmark: it is only a
// hint, and the next event decides whether the watcher is too slow.
func (c *Cache) maybeBookmarkLocked(w *watcher, now time.Time, bm *bookmarkOnce) {
	if !w.bookmarks || c.rev <= w.sentRev || now.Sub(w.lastSent) < c.cfg.bookmarkInterval {
		return
	}
	obj := bm.get()
	if obj == nil {
		return
	}
	if w.push(watch.Event{Type: watch.Bookmark, Object: obj}) {
		w.wake() // rare enough to do under the lock
		w.sentRev, w.lastSent = c.rev, now
		c.bookmarksSent++
	}
}

// bookmarkOnce builds the bookmark object for Revision() once per pass and
// shares it between watchers.
type bookmarkOnce struct {
	cache *Cache
	obj   object.Object
}

func (b *bookmarkOnce) get() object.Object {
	if b.obj == nil {
		b.obj = b.cache.exemplar.bookmark(strconv.FormatInt(b.cache.rev, 10))
	}
	return b.obj
}
