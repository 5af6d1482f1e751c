package workqueue

import "sync"

// Interface is the deduplicating work queue.
type Interface[T comparable] interface {
	// Add queues item unless it is queued already; an item being processed
	// is queued again when Done is called for it. Add after ShutDown is a no-op.
	Add(item T)
	// Len is the number of items waiting to be processed.
	Len() int
	// Get blocks until an item is ready and marks it as being processed.
	// shutdown is true, and item the zero value, once the queue is shut down
	// and empty.
	Get() (item T, shutdown bool)
	// Done marks item as processed; every item from Get needs one Done.
	Done(item T)
	// ShutDown makes Get return shutdown once the queue is empty and ignores
	// further Adds; it does not wait.
	ShutDown()
	// ShutDownWithDrain is ShutDown that also waits until every queued and
	// in-flight item is Done.
	ShutDownWithDrain()
	ShuttingDown() bool
}

// Queue is the basic Interface: FIFO order, each item at most once.
type Queue[T comparable] struct {
	mu      sync.Mutex
	cond    sync.Cond // signalled when an item is queued or the queue shuts down
	drained sync.Cond // broadcast when a draining queue has nothing left

	queue      []T            // waiting items in order; each is also in dirty
	dirty      map[T]struct{} // items waiting, or added again while processing
	processing map[T]struct{} // items between Get and Done

	shuttingDown bool
	drain        bool
}

var _ Interface[string] = (*Queue[string])(nil)

// New returns an empty queue.
func New[T comparable]() *Queue[T] {
	q := &Queue[T]{dirty: map[T]struct{}{}, processing: map[T]struct{}{}}
	q.cond.L = &q.mu
	q.drained.L = &q.mu
	return q
}

func (q *Queue[T]) Add(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	if _, ok := q.dirty[item]; ok {
		return
	}
	q.dirty[item] = struct{}{}
	if _, ok := q.processing[item]; ok {
		return // Done queues it
	}
	q.queue = append(q.queue, item)
	q.cond.Signal()
}

func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

func (q *Queue[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.queue) == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if len(q.queue) == 0 {
		return item, true
	}
	item = q.queue[0]
	var zero T
	q.queue[0] = zero // let the garbage collector have it
	q.queue = q.queue[1:]
	q.processing[item] = struct{}{}
	delete(q.dirty, item)
	return item, false
}

func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, item)
	if _, ok := q.dirty[item]; ok {
		q.queue = append(q.queue, item)
		q.cond.Signal()
		return
	}
	if q.drain && len(q.processing) == 0 && len(q.queue) == 0 {
		q.drained.Broadcast()
	}
}

func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shuttingDown = true
	q.drain = false // a ShutDownWithDrain in progress stops waiting
	q.cond.Broadcast()
	q.drained.Broadcast()
}

func (q *Queue[T]) ShutDownWithDrain() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shuttingDown = true
	q.drain = true
	q.cond.Broadcast()
	for q.drain && (len(q.processing) > 0 || len(q.queue) > 0) {
		q.drained.Wait()
	}
	q.drain = false
}

func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
