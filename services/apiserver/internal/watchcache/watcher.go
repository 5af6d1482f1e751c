package watchcache

import (
	"context"
	"sync"
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
	ctx       context.Context
	filter    Filter
	bookmarks bool

	result   chan watch.Event
	done     chan struct{} // closed once, by Stop, too-slow or Replace
	stopOnce sync.Once

	// initial is owned by the goroutine once it has started.
	initial []watch.Event

	// Guarded by cache.mu.
	sentRev  int64     // the revision the client's stream is complete to, as far as it was told
	lastSent time.Time // when the last event or bookmark was queued

	// mu guards the queue; cache.mu is taken before it, never after.
	mu     sync.Mutex
	queue  []watch.Event
	taken  int // events of the goroutine's current batch not yet received
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
func (w *watcher) push(ev watch.Event) bool {
	w.mu.Lock()
	if len(w.queue)+w.taken >= w.limit {
		w.mu.Unlock()
		return false
	}
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	select {
	case w.notify <- struct{}{}:
	default:
	}
	return true
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
	w.queue, w.taken = done[:0], len(batch)
	return batch
}

// sent records that the client received one event of the taken batch.
func (w *watcher) sent() {
	w.mu.Lock()
	w.taken--
	w.mu.Unlock()
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
			case <-w.ctx.Done():
				return
			}
		}
		for i := range batch {
			if !w.send(batch[i]) {
				return
			}
			w.sent()
		}
	}
}

// send blocks until the client takes ev or the watch ends; a watch that has
// ended sends nothing more, even to a client that is ready to read.
func (w *watcher) send(ev watch.Event) bool {
	select {
	case <-w.done:
		return false
	case <-w.ctx.Done():
		return false
	default:
	}
	select {
	case w.result <- ev:
		return true
	case <-w.done:
		return false
	case <-w.ctx.Done():
		return false
	}
}

func (w *watcher) finish() {
	w.cache.forget(w)
	w.stop()
	w.mu.Lock()
	w.queue = nil
	w.mu.Unlock()
	w.initial = nil
	close(w.result)
}
