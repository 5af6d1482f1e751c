package watchcache

import (
	"sort"
	"strconv"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
)

// entry is one applied change as the ring keeps it: the new state and the
// state the cache held before, so that each watcher can decide with its own
// filter whether the change is an ADDED, MODIFIED or DELETED for it.
type entry struct {
	typ  watch.EventType
	obj  object.Object
	prev object.Object // the cache's state of the key before; nil if it had none
	rev  int64
	// leaving is prev with resourceVersion set to rev: the object of the
	// DELETED a watcher gets when the object stops matching its filter
	// (Kubernetes sends the last matching state at the event's revision).
	// Built at most once, on first need, then shared read-only.
	leaving object.Object
}

// convert is the event a watcher with filter f receives for e, and whether
// it receives one at all. It follows kube-apiserver's cacheWatcher: an
// object that starts matching is ADDED, keeps matching is MODIFIED, stops
// matching (or is deleted while matching) is DELETED.
func (e *entry) convert(f Filter) (watch.Event, bool) {
	var cur, old bool
	if f.matchesAll() {
		cur, old = e.typ != watch.Deleted, e.prev != nil
	} else {
		cur = e.typ != watch.Deleted && f.Matches(e.obj)
		old = e.prev != nil && f.Matches(e.prev)
	}
	switch {
	case cur && !old:
		return watch.Event{Type: watch.Added, Object: e.obj}, true
	case cur && old:
		return watch.Event{Type: watch.Modified, Object: e.obj}, true
	case old && e.typ == watch.Deleted:
		// The source already gives the last state at the delete's revision.
		return watch.Event{Type: watch.Deleted, Object: e.obj}, true
	case old:
		return watch.Event{Type: watch.Deleted, Object: e.leavingObject()}, true
	}
	return watch.Event{}, false
}

func (e *entry) leavingObject() object.Object {
	if e.leaving == nil {
		o := proto.Clone(e.prev).(object.Object)
		if m := o.GetMetadata(); m != nil {
			m.ResourceVersion = strconv.FormatInt(e.rev, 10)
		}
		e.leaving = o
	}
	return e.leaving
}

// ring is a fixed-size circular buffer of the latest entries, oldest first.
type ring struct {
	buf  []entry
	head int // index of the oldest entry
	n    int
}

func newRing(capacity int) ring { return ring{buf: make([]entry, capacity)} }

func (r *ring) len() int { return r.n }

func (r *ring) at(i int) *entry { return &r.buf[(r.head+i)%len(r.buf)] }

// push appends e and returns its slot; when the ring is full it first
// drops the oldest entry and reports that entry's revision.
func (r *ring) push(e entry) (slot *entry, evicted int64, didEvict bool) {
	if r.n == len(r.buf) {
		old := &r.buf[r.head]
		evicted, didEvict = old.rev, true
		*old = entry{}
		r.head = (r.head + 1) % len(r.buf)
		r.n--
	}
	slot = &r.buf[(r.head+r.n)%len(r.buf)]
	*slot = e
	r.n++
	return slot, evicted, didEvict
}

// after returns the index of the first entry with a revision above rev.
func (r *ring) after(rev int64) int {
	return sort.Search(r.n, func(i int) bool { return r.at(i).rev > rev })
}

// reset empties the ring and lets go of every object it held.
func (r *ring) reset() {
	clear(r.buf)
	r.head, r.n = 0, 0
}
