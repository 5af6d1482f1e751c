package workqueue

import (
	"container/heap"
	"sync"
	"time"

	"podline.dev/pkg/clock"
)

// DelayingInterface is an Interface that can add an item later.
type DelayingInterface[T comparable] interface {
	Interface[T]
	// AddAfter adds item once d has passed on the queue's clock; d <= 0 adds
	// it now. An item already waiting keeps the earlier of its two times.
	AddAfter(item T, d time.Duration)
}

// DelayingQueue holds delayed items aside until they are due, then Adds them.
type DelayingQueue[T comparable] struct {
	*Queue[T]
	clock clock.Clock

	mu      sync.Mutex
	waiting waitingSet[T]

	wake     chan struct{} // a new item may be due sooner
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

var _ DelayingInterface[string] = (*DelayingQueue[string])(nil)

// NewDelayingQueue returns a queue with a goroutine that moves delayed items
// in when they are due; ShutDown ends it.
func NewDelayingQueue[T comparable](opts ...Option) *DelayingQueue[T] {
	cfg := newConfig(opts)
	q := &DelayingQueue[T]{
		Queue:   New[T](),
		clock:   cfg.clock,
		waiting: waitingSet[T]{index: map[T]*waitEntry[T]{}},
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go q.loop()
	return q
}

func (q *DelayingQueue[T]) AddAfter(item T, d time.Duration) {
	if q.ShuttingDown() {
		return
	}
	if d <= 0 {
		q.Add(item)
		return
	}
	q.mu.Lock()
	q.waiting.add(item, q.clock.Now().Add(d))
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// ShutDown drops the items still waiting for their time and shuts the queue down.
func (q *DelayingQueue[T]) ShutDown() {
	q.stopLoop()
	q.Queue.ShutDown()
}

// ShutDownWithDrain drops the items still waiting for their time and drains the rest.
func (q *DelayingQueue[T]) ShutDownWithDrain() {
	q.stopLoop()
	q.Queue.ShutDownWithDrain()
}

func (q *DelayingQueue[T]) stopLoop() {
	q.stopOnce.Do(func() { close(q.stop) })
	<-q.done
}

// loop adds the items that are due, then sleeps until the next one is due
// or a new item arrives.
func (q *DelayingQueue[T]) loop() {
	defer close(q.done)
	for {
		now := q.clock.Now()
		q.mu.Lock()
		ready := q.waiting.popReady(now)
		next, pending := q.waiting.next()
		q.mu.Unlock()
		for _, item := range ready {
			q.Add(item)
		}

		var timer clock.Timer
		var due <-chan time.Time
		if pending {
			timer = q.clock.NewTimer(next.Sub(now))
			due = timer.C()
		}
		stopped := false
		select {
		case <-q.stop:
			stopped = true
		case <-due:
		case <-q.wake:
		}
		if timer != nil {
			timer.Stop()
		}
		if stopped {
			return
		}
	}
}

// waitingSet is a min-heap of items by the time they are due, with an index
// so an item waits once. It is pure: the caller passes the time.
type waitingSet[T comparable] struct {
	entries []*waitEntry[T]
	index   map[T]*waitEntry[T]
}

type waitEntry[T comparable] struct {
	item  T
	ready time.Time
	pos   int
}

func (w *waitingSet[T]) add(item T, ready time.Time) {
	if e, ok := w.index[item]; ok {
		if ready.Before(e.ready) {
			e.ready = ready
			heap.Fix(w, e.pos)
		}
		return
	}
	e := &waitEntry[T]{item: item, ready: ready}
	w.index[item] = e
	heap.Push(w, e)
}

// popReady removes and returns the items due at now, earliest first.
func (w *waitingSet[T]) popReady(now time.Time) []T {
	var ready []T
	for len(w.entries) > 0 && !w.entries[0].ready.After(now) {
		e := heap.Pop(w).(*waitEntry[T])
		delete(w.index, e.item)
		ready = append(ready, e.item)
	}
	return ready
}

// next is the time the earliest item is due.
func (w *waitingSet[T]) next() (time.Time, bool) {
	if len(w.entries) == 0 {
		return time.Time{}, false
	}
	return w.entries[0].ready, true
}

// heap.Interface
func (w *waitingSet[T]) Len() int           { return len(w.entries) }
func (w *waitingSet[T]) Less(i, j int) bool { return w.entries[i].ready.Before(w.entries[j].ready) }
func (w *waitingSet[T]) Swap(i, j int) {
	w.entries[i], w.entries[j] = w.entries[j], w.entries[i]
	w.entries[i].pos = i
	w.entries[j].pos = j
}
func (w *waitingSet[T]) Push(x any) {
	e := x.(*waitEntry[T])
	e.pos = len(w.entries)
	w.entries = append(w.entries, e)
}
func (w *waitingSet[T]) Pop() any {
	n := len(w.entries) - 1
	e := w.entries[n]
	w.entries[n] = nil
	w.entries = w.entries[:n]
	return e
}
