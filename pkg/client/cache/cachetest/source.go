package cachetest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	metav1 "podline.dev/proto/meta/v1"
)

// Source is the in-memory apiserver of one resource. It satisfies
// cache.ListerWatcher and cache.ListPager. Selectors are not supported: a
// request with one fails with 400.
type Source struct {
	exemplar object.Object

	mu        sync.Mutex
	objects   map[string]object.Object
	rev       int64
	history   []watch.Event // every change, in revision order
	compacted int64         // changes at or below this revision are forgotten
	watchers  map[*watcher]struct{}
	snapshots map[int64]snapshot // for paged lists, by id
	nextSnap  int64

	failList  []error
	failWatch []error
	listCalls int
	watchRVs  []string
}

type snapshot struct {
	rv    int64
	items []object.Object
}

// NewSource returns an empty Source of exemplar's type, at revision 1.
func NewSource(exemplar object.Object) *Source {
	return &Source{
		exemplar:  exemplar,
		objects:   map[string]object.Object{},
		rev:       1,
		watchers:  map[*watcher]struct{}{},
		snapshots: map[int64]snapshot{},
	}
}

var resource = apierrors.GroupResource{Resource: "objects"}

// Create stores a copy of obj at the next revision and returns it.
func (s *Source) Create(obj object.Object) (object.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := object.Key(obj)
	if _, ok := s.objects[key]; ok {
		return nil, apierrors.NewAlreadyExists(resource, obj.GetMetadata().GetName())
	}
	return s.writeLocked(watch.Added, obj), nil
}

// Update replaces the stored object at the next revision and returns it.
func (s *Source) Update(obj object.Object) (object.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[object.Key(obj)]; !ok {
		return nil, apierrors.NewNotFound(resource, obj.GetMetadata().GetName())
	}
	return s.writeLocked(watch.Modified, obj), nil
}

// Delete removes namespace/name at the next revision.
func (s *Source) Delete(namespace, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.objects[object.KeyOf(namespace, name)]
	if !ok {
		return apierrors.NewNotFound(resource, name)
	}
	s.writeLocked(watch.Deleted, old)
	return nil
}

func (s *Source) writeLocked(t watch.EventType, obj object.Object) object.Object {
	s.rev++
	stored := object.Copy(obj)
	if stored.GetMetadata() == nil {
		setMetadata(stored, &metav1.ObjectMeta{})
	}
	stored.GetMetadata().ResourceVersion = strconv.FormatInt(s.rev, 10)
	key := object.Key(stored)
	if t == watch.Deleted {
		delete(s.objects, key)
	} else {
		s.objects[key] = stored
	}
	ev := watch.Event{Type: t, Object: stored}
	s.history = append(s.history, ev)
	for w := range s.watchers {
		w.send(ev)
	}
	return object.Copy(stored)
}

// AdvanceRevision moves the revision on by n without changing this
// resource, as writes to other resources do to etcd's shared revision.
func (s *Source) AdvanceRevision(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev += n
}

// ResourceVersion is the current revision.
func (s *Source) ResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strconv.FormatInt(s.rev, 10)
}

// Objects returns copies of the stored objects, sorted by key.
func (s *Source) Objects() []object.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sortedLocked()
}

func (s *Source) sortedLocked() []object.Object {
	out := make([]object.Object, 0, len(s.objects))
	for _, o := range s.objects {
		out = append(out, object.Copy(o))
	}
	slices.SortFunc(out, func(a, b object.Object) int { return cmp.Compare(object.Key(a), object.Key(b)) })
	return out
}

// Compact forgets the history up to the current revision: a watch from an
// older revision, and a paged list begun before, now get 410 Gone.
func (s *Source) Compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compacted = s.rev
	s.history = nil
}

// DropWatches ends every open watch at once, as a broken connection does:
// events not yet delivered are lost.
func (s *Source) DropWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watchers {
		delete(s.watchers, w)
		w.abort()
	}
}

// SendError ends every open watch with an ERROR event carrying err, after
// the events already on their way.
func (s *Source) SendError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := range s.watchers {
		delete(s.watchers, w)
		w.send(watch.Event{Type: watch.Error, Err: err})
		w.finish()
	}
}

// Bookmark sends a BOOKMARK at the current revision to every open watch
// that allows them, and returns that revision.
func (s *Source) Bookmark() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rv := strconv.FormatInt(s.rev, 10)
	for w := range s.watchers {
		if w.bookmarks {
			bm := newObject(s.exemplar)
			setMetadata(bm, &metav1.ObjectMeta{ResourceVersion: rv})
			w.send(watch.Event{Type: watch.Bookmark, Object: bm})
		}
	}
	return rv
}

// FailNextList makes the next List or first ListPage fail with err.
func (s *Source) FailNextList(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failList = append(s.failList, err)
}

// FailNextWatch makes the next Watch call fail with err.
func (s *Source) FailNextWatch(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failWatch = append(s.failWatch, err)
}

// ListCalls is the number of lists begun (a paged list counts once).
func (s *Source) ListCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listCalls
}

// WatchCalls are the resourceVersions of every Watch call, in order.
func (s *Source) WatchCalls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.watchRVs)
}

// OpenWatches is the number of watches streaming now.
func (s *Source) OpenWatches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.watchers)
}

func checkRequest(opts *metav1.ListRequest) error {
	if opts.GetLabelSelector() != "" || opts.GetFieldSelector() != "" {
		return apierrors.NewBadRequest("cachetest.Source does not support selectors")
	}
	return nil
}

// List returns every object and the current revision.
func (s *Source) List(_ context.Context, opts *metav1.ListRequest) ([]object.Object, string, error) {
	if err := checkRequest(opts); err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listCalls++
	if err := s.popLocked(&s.failList); err != nil {
		return nil, "", err
	}
	return s.sortedLocked(), strconv.FormatInt(s.rev, 10), nil
}

// ListPage returns up to opts.Limit objects of a snapshot taken by the first
// page, as the apiserver does; the continue token expires with Compact.
func (s *Source) ListPage(_ context.Context, opts *metav1.ListRequest) ([]object.Object, string, string, error) {
	if err := checkRequest(opts); err != nil {
		return nil, "", "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var snap snapshot
	var id, offset int64
	if opts.GetContinue() == "" {
		s.listCalls++
		if err := s.popLocked(&s.failList); err != nil {
			return nil, "", "", err
		}
		id = s.nextSnap
		s.nextSnap++
		snap = snapshot{rv: s.rev, items: s.sortedLocked()}
		s.snapshots[id] = snap
	} else {
		var ok bool
		if _, err := fmt.Sscanf(opts.GetContinue(), "%d/%d", &id, &offset); err != nil {
			return nil, "", "", apierrors.NewBadRequest(fmt.Sprintf("invalid continue token %q", opts.GetContinue()))
		}
		if snap, ok = s.snapshots[id]; !ok || snap.rv <= s.compacted {
			delete(s.snapshots, id)
			return nil, "", "", apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.")
		}
	}
	end := int64(len(snap.items))
	if limit := opts.GetLimit(); limit > 0 && offset+limit < end {
		end = offset + limit
	}
	page := snap.items[offset:end]
	next := ""
	if end < int64(len(snap.items)) {
		next = fmt.Sprintf("%d/%d", id, end)
	} else {
		delete(s.snapshots, id)
	}
	return page, strconv.FormatInt(snap.rv, 10), next, nil
}

// Watch streams the changes after opts.ResourceVersion, then new ones. An
// empty or "0" resourceVersion starts with an ADDED event per object.
// opts.TimeoutSeconds is ignored: streams end only by Stop, ctx or a fault.
func (s *Source) Watch(ctx context.Context, opts *metav1.ListRequest) (watch.Interface, error) {
	if err := checkRequest(opts); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchRVs = append(s.watchRVs, opts.GetResourceVersion())
	if err := s.popLocked(&s.failWatch); err != nil {
		return nil, err
	}
	w := newWatcher(s, opts.GetAllowWatchBookmarks())
	switch rv := opts.GetResourceVersion(); rv {
	case "", "0":
		for _, o := range s.sortedLocked() {
			w.send(watch.Event{Type: watch.Added, Object: o})
		}
	default:
		from, err := strconv.ParseInt(rv, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q", rv))
		}
		if from < s.compacted {
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, s.compacted))
		}
		for _, ev := range s.history {
			if rvOf(ev) > from {
				w.send(watch.Event{Type: ev.Type, Object: object.Copy(ev.Object)})
			}
		}
	}
	s.watchers[w] = struct{}{}
	go w.run(ctx)
	return w, nil
}

func (s *Source) popLocked(q *[]error) error {
	if len(*q) == 0 {
		return nil
	}
	err := (*q)[0]
	*q = (*q)[1:]
	return err
}

func (s *Source) forget(w *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.watchers, w)
}

func rvOf(ev watch.Event) int64 {
	n, _ := strconv.ParseInt(ev.Object.GetMetadata().GetResourceVersion(), 10, 64)
	return n
}

// newObject returns an empty message of exemplar's type.
func newObject(exemplar object.Object) object.Object {
	return exemplar.ProtoReflect().New().Interface().(object.Object)
}

// setMetadata sets the metadata field of any kind.
func setMetadata(obj object.Object, m *metav1.ObjectMeta) {
	msg := obj.ProtoReflect()
	fd := msg.Descriptor().Fields().ByName("metadata")
	msg.Set(fd, protoreflect.ValueOfMessage(m.ProtoReflect()))
}

// watcher is one open watch: an unbounded queue of events and a goroutine
// that delivers them, so the Source never waits for a slow client.
type watcher struct {
	src       *Source
	bookmarks bool
	ch        chan watch.Event

	mu       sync.Mutex
	pending  []watch.Event
	finished bool // close after delivering pending

	notify   chan struct{}
	stopped  chan struct{}
	stopOnce sync.Once
}

func newWatcher(s *Source, bookmarks bool) *watcher {
	return &watcher{
		src:       s,
		bookmarks: bookmarks,
		ch:        make(chan watch.Event),
		notify:    make(chan struct{}, 1),
		stopped:   make(chan struct{}),
	}
}

func (w *watcher) ResultChan() <-chan watch.Event { return w.ch }

// Stop ends the watch; events not yet delivered are dropped.
func (w *watcher) Stop() {
	w.abort()
	w.src.forget(w)
}

func (w *watcher) abort() { w.stopOnce.Do(func() { close(w.stopped) }) }

func (w *watcher) send(ev watch.Event) {
	w.mu.Lock()
	w.pending = append(w.pending, ev)
	w.mu.Unlock()
	w.poke()
}

func (w *watcher) finish() {
	w.mu.Lock()
	w.finished = true
	w.mu.Unlock()
	w.poke()
}

func (w *watcher) poke() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

func (w *watcher) run(ctx context.Context) {
	defer close(w.ch)
	defer w.src.forget(w)
	for {
		w.mu.Lock()
		batch, finished := w.pending, w.finished
		w.pending = nil
		w.mu.Unlock()
		for _, ev := range batch {
			select {
			case w.ch <- ev:
			case <-w.stopped:
				return
			case <-ctx.Done():
				return
			}
		}
		if len(batch) > 0 {
			continue
		}
		if finished {
			return
		}
		select {
		case <-w.notify:
		case <-w.stopped:
			return
		case <-ctx.Done():
			return
		}
	}
}

// String helps test failure messages.
func (s *Source) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.objects))
	for k, o := range s.objects {
		keys = append(keys, k+"@"+o.GetMetadata().GetResourceVersion())
	}
	slices.Sort(keys)
	return "rev " + strconv.FormatInt(s.rev, 10) + ": " + strings.Join(keys, " ")
}
