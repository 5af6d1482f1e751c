package cache

import (
	"sync"

	"podline.dev/pkg/object"
)

// DeltaType is the kind of change a Delta records.
type DeltaType string

const (
	Added   DeltaType = "Added"
	Updated DeltaType = "Updated"
	Deleted DeltaType = "Deleted"
	// Replaced is an object that a relist (Replace) found; whether it changed
	// is for the consumer to tell from what it knows.
	Replaced DeltaType = "Replaced"
	// Sync is a periodic resync of an object that did not change.
	Sync DeltaType = "Sync"
)

// Delta is one change to one object: its type and the object after it
// (for Deleted, the last state known, or a DeletedFinalStateUnknown).
type Delta struct {
	Type   DeltaType
	Object object.Object
}

// Deltas are the changes to one key, oldest first.
type Deltas []Delta

// Oldest is the first delta, or nil.
func (d Deltas) Oldest() *Delta {
	if len(d) == 0 {
		return nil
	}
	return &d[0]
}

// Newest is the last delta, or nil.
func (d Deltas) Newest() *Delta {
	if len(d) == 0 {
		return nil
	}
	return &d[len(d)-1]
}

// DeletedFinalStateUnknown is the object of a Deleted delta whose deletion
// was not seen: a relist no longer had the key, so the object was deleted
// while the watch was down. It embeds the last state known, so it is an
// object.Object with that object's metadata; Key is the store key. Use As to
// get the typed object out of an OnDelete argument either way.
type DeletedFinalStateUnknown struct {
	object.Object
	Key string
}

// As returns obj, or the last known state inside a DeletedFinalStateUnknown,
// as a T; ok is false if it is some other type.
func As[T object.Object](obj object.Object) (t T, ok bool) {
	if d, isTombstone := obj.(DeletedFinalStateUnknown); isTombstone {
		obj = d.Object
	}
	t, ok = obj.(T)
	return t, ok
}

// KeyListerGetter is the part of a Store that a DeltaFIFO consults to learn
// which objects its consumer already has: to detect deletions on Replace and
// to resync. An informer passes its Indexer.
type KeyListerGetter interface {
	ListKeys() []string
	GetByKey(key string) (object.Object, bool, error)
}

// PopProcessFunc handles the deltas of one key. isInInitialList is true for
// keys from the first Replace that have not been popped before.
type PopProcessFunc func(deltas Deltas, isInInitialList bool) error

// DeltaFIFO is a queue of keys, each holding the list of changes to its
// object since it was last popped. A Reflector writes into it; an informer
// pops a key with all its deltas and applies them to its Indexer and
// handlers, so no change is lost however slowly it consumes, and each key is
// handled by one consumer at a time.
//
// Consecutive Deleted deltas collapse into one. Replace (a relist) queues a
// Replaced delta for every listed object and a Deleted delta carrying a
// DeletedFinalStateUnknown for every key that was known (to knownObjects or
// queued) but is no longer listed.
type DeltaFIFO struct {
	mu   sync.Mutex
	cond sync.Cond

	items map[string]Deltas
	queue []string // keys in order; each key is in items, and vice versa

	keyFunc      KeyFunc
	knownObjects KeyListerGetter

	// populated is set by the first Add, Update, Delete or Replace;
	// initialPopulationCount is the number of keys of the first Replace not popped yet.
	populated              bool
	initialPopulationCount int

	closed bool
}

// NewDeltaFIFO returns an empty DeltaFIFO. keyFunc defaults to
// MetaNamespaceKeyFunc; knownObjects may be nil, in which case the FIFO
// detects deletions only among keys still queued.
func NewDeltaFIFO(keyFunc KeyFunc, knownObjects KeyListerGetter) *DeltaFIFO {
	if keyFunc == nil {
		keyFunc = MetaNamespaceKeyFunc
	}
	f := &DeltaFIFO{items: map[string]Deltas{}, keyFunc: keyFunc, knownObjects: knownObjects}
	f.cond.L = &f.mu
	return f
}

// KeyOf is the key of obj, or the Key of a DeletedFinalStateUnknown.
func (f *DeltaFIFO) KeyOf(obj object.Object) (string, error) {
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	k, err := f.keyFunc(obj)
	if err != nil {
		return "", KeyError{Obj: obj, Err: err}
	}
	return k, nil
}

// HasSynced is true once the objects of the first Replace have all been
// popped and processed (or the first call was an Add, Update or Delete).
func (f *DeltaFIFO) HasSynced() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.populated && f.initialPopulationCount == 0
}

func (f *DeltaFIFO) Add(obj object.Object) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.populated = true
	return f.queueLocked(Added, obj)
}

func (f *DeltaFIFO) Update(obj object.Object) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.populated = true
	return f.queueLocked(Updated, obj)
}

// Delete queues a Deleted delta, unless the key is neither queued nor known,
// in which case there is nothing to delete and it does nothing.
func (f *DeltaFIFO) Delete(obj object.Object) error {
	id, err := f.KeyOf(obj)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.populated = true
	_, queued := f.items[id]
	known := false
	if f.knownObjects != nil {
		_, exists, err := f.knownObjects.GetByKey(id)
		known = exists || err != nil // when in doubt, deliver the deletion
	}
	if !queued && !known {
		return nil
	}
	return f.queueLocked(Deleted, obj)
}

// Replace queues list as the complete state at resourceVersion: a Replaced
// delta per object, and a Deleted DeletedFinalStateUnknown delta per key
// that is known or queued but missing from list.
func (f *DeltaFIFO) Replace(list []object.Object, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	listed := make(map[string]struct{}, len(list))
	for _, obj := range list {
		id, err := f.KeyOf(obj)
		if err != nil {
			return err
		}
		listed[id] = struct{}{}
		if err := f.queueLocked(Replaced, obj); err != nil {
			return err
		}
	}

	deletions := 0
	vanished := func(id string, last object.Object) error {
		if d, ok := last.(DeletedFinalStateUnknown); ok {
			last = d.Object
		}
		deletions++
		return f.queueLocked(Deleted, DeletedFinalStateUnknown{Object: last, Key: id})
	}
	// Keys the consumer has that the list no longer has.
	known := map[string]struct{}{}
	if f.knownObjects != nil {
		for _, id := range f.knownObjects.ListKeys() {
			known[id] = struct{}{}
			if _, ok := listed[id]; ok {
				continue
			}
			last, exists, err := f.knownObjects.GetByKey(id)
			if err != nil || !exists {
				continue // deleted meanwhile: the Deleted delta is queued already
			}
			if err := vanished(id, last); err != nil {
				return err
			}
		}
	}
	// Keys only queued (added, not yet popped) that the list no longer has.
	for id, deltas := range f.items {
		if _, ok := listed[id]; ok {
			continue
		}
		if _, ok := known[id]; ok {
			continue
		}
		if newest := deltas.Newest(); newest.Type != Deleted {
			if err := vanished(id, newest.Object); err != nil {
				return err
			}
		}
	}

	if !f.populated {
		f.populated = true
		f.initialPopulationCount = len(listed) + deletions
	}
	return nil
}

// Resync queues a Sync delta for every known object that has no delta queued.
func (f *DeltaFIFO) Resync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.knownObjects == nil {
		return nil
	}
	for _, id := range f.knownObjects.ListKeys() {
		if len(f.items[id]) > 0 {
			continue // a newer change is on its way anyway
		}
		obj, exists, err := f.knownObjects.GetByKey(id)
		if err != nil || !exists {
			continue
		}
		if err := f.queueLocked(Sync, obj); err != nil {
			return err
		}
	}
	return nil
}

// Pop waits for a key, removes it with its deltas, and calls process with
// them while holding the FIFO's lock, so that the consumer's view (usually
// the knownObjects store) changes atomically with the queue: process must
// not call back into the FIFO. Pop returns the deltas and process's error,
// or ErrFIFOClosed once the FIFO is closed and empty.
func (f *DeltaFIFO) Pop(process PopProcessFunc) (Deltas, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.queue) == 0 {
		if f.closed {
			return nil, ErrFIFOClosed
		}
		f.cond.Wait()
	}
	id := f.queue[0]
	f.queue[0] = ""
	f.queue = f.queue[1:]
	deltas := f.items[id]
	delete(f.items, id)
	isInInitialList := f.initialPopulationCount > 0
	if isInInitialList {
		f.initialPopulationCount--
	}
	return deltas, process(deltas, isInInitialList)
}

// Close makes Pop return ErrFIFOClosed once the queue is empty.
func (f *DeltaFIFO) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.cond.Broadcast()
}

// IsClosed reports whether Close was called.
func (f *DeltaFIFO) IsClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// ListKeys returns the queued keys in order.
func (f *DeltaFIFO) ListKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.queue...)
}

// Len is the number of queued keys.
func (f *DeltaFIFO) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}

func (f *DeltaFIFO) queueLocked(t DeltaType, obj object.Object) error {
	id, err := f.KeyOf(obj)
	if err != nil {
		return err
	}
	old := f.items[id]
	deltas := dedupDeltas(append(old, Delta{Type: t, Object: obj}))
	if len(old) == 0 {
		f.queue = append(f.queue, id)
	}
	f.items[id] = deltas
	f.cond.Broadcast()
	return nil
}

// dedupDeltas collapses a Deleted following a Deleted: the object is gone
// either way. It keeps the delta that knows the object's final state.
func dedupDeltas(d Deltas) Deltas {
	n := len(d)
	if n < 2 || d[n-1].Type != Deleted || d[n-2].Type != Deleted {
		return d
	}
	if _, olderUnknown := d[n-2].Object.(DeletedFinalStateUnknown); olderUnknown {
		d[n-2] = d[n-1]
	}
	return d[:n-1]
}
