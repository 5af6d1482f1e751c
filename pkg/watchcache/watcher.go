package watchcache

import (
	"sync"
	"sync/atomic"
	"time"

	"podline.dev/pkg/watch"
)

// watcher is one running watch. Apply hands it events through a bounded
// queue without ever blocking; one goroutine per watcher first sends the
// initial events (the backlog from the ring, or the synthetic ADDs of a
// watch from revision 0) and then the queue, into the unbuffered result
// channel the client reads.
type watcher struct {
	cache     *Cache
	filter    Filter
	bookmarks bool

	result   chan watch.Event
	done     chan struct{} // closed once: by Stop, ctx, too-slow or Replace
	stopOnce sync.Once
	// unhookCtx releases the context.AfterFunc that stops the watch when
	// its context ends; the goroutine then selects on done alone.
	unhookCtx func() bool

	// initial is owned by the goroutine once it has started.
	initial []watch.Event

	// Guarded by cache.mu.
	sentRev  int64     // the revision the client's stream is complete to, as far as it was told
	lastSent time.Time // when the last event or bookmark was queued

	// mu guards the queue; cache.mu is taken before it, never after.
	mu     sync.Mutex
	queue  []watch.Event
	taken  atomic.Int64 // events of the goroutine's batch not yet received; written by it alone
	limit  int
	notify chan struct{} // capacity 1: "the queue is not empty"
}

var _ watch.Interface = (*watcher)(nil)

// queueKeep is the backing array a drained queue keeps; a larger one,
// grown by a burst, is released so that idle watchers stay small.
const queueKeep = 64

func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch: the watcher leaves the cache at once, and its result
// channel is closed promptly. Safe to call more than once.
func (w *watcher) Stop() {
	w.cache.forget(w)
	w.stop()
}

func (w *watcher) stop() { w.stopOnce.Do(func() { close(w.done) }) }

// push queues ev unless the watcher already holds limit undelivered events
// (queued, or taken by its goroutine and not yet received by the client).
// The caller then calls wake, preferably after releasing the cache's lock:
// waking a parked goroutine is scheduler work that List and Watch need not
// wait for.
func (w *watcher) push(ev watch.Event) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.queue)+int(w.taken.Load()) >= w.limit {
		return false
	}
	w.queue = append(w.queue, ev)
	return true
}

// wake tells the goroutine the queue is not empty; safe on a stopped watcher.
func (w *watcher) wake() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// take hands the goroutine everything queued, in exchange for the batch it
// has finished sending (whose backing array the queue then reuses).
func (w *watcher) take(done []watch.Event) []watch.Event {
	clear(done)
	w.mu.Lock()
	defer w.mu.Unlock()
	batch := w.queue
	if cap(done) > queueKeep {
		done = nil // let a burst's array go
	}
	w.queue = done[:0]
	w.taken.Store(int64(len(batch)))
	return batch
}

// run is the watcher's goroutine.
func (w *watcher) run() {
	defer w.finish()
	for i := range w.initial {
		if !w.send(w.initial[i]) {
			return
		}
		w.initial[i] = watch.Event{}
	}
	w.initial = nil
	var batch []watch.Event
	for {
		batch = w.take(batch)
		if len(batch) == 0 {
			select {
			case <-w.notify:
				continue
			case <-w.done:
				return
			}
		}
		for i := range batch {
			if !w.send(batch[i]) {
				return
			}
			w.taken.Add(-1)
		}
	}
}

// send blocks until the client takes ev or the watch ends; a watch that has
// ended sends nothing more, even to a client that is ready to read.
func (w *watcher) send(ev watch.Event) bool {
	select {
	case <-w.done:
		return false
	default:
	}
	select {
	case w.result <- ev:
		return true
	case <-w.done:
		return false
	}
}

func (w *watcher) finish() {
	w.unhookCtx()
	w.cache.forget(w)
	w.stop()
	w.mu.Lock()
	w.queue = nil
	w.mu.Unlock()
	w.initial = nil
	close(w.result)
}
