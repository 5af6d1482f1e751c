package cache

import (
	"sync"

	"podline.dev/pkg/object"
)

// ResourceEventHandler is told about changes to an informer's objects, one
// call at a time per handler, in the order the informer applied them.
// Objects are the cached ones: read-only. Handlers should only enqueue keys
// and return; a slow handler delays only its own notifications.
type ResourceEventHandler interface {
	OnAdd(obj object.Object)
	// OnUpdate is called for every change and, with oldObj and newObj the
	// same, on each resync.
	OnUpdate(oldObj, newObj object.Object)
	// OnDelete gets the last state known, or a DeletedFinalStateUnknown when
	// the deletion happened while the watch was down; As unwraps either.
	OnDelete(obj object.Object)
}

// ResourceEventHandlerFuncs is a ResourceEventHandler made of functions;
// nil ones are skipped.
type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj object.Object)
	UpdateFunc func(oldObj, newObj object.Object)
	DeleteFunc func(obj object.Object)
}

var _ ResourceEventHandler = ResourceEventHandlerFuncs{}

func (f ResourceEventHandlerFuncs) OnAdd(obj object.Object) {
	if f.AddFunc != nil {
		f.AddFunc(obj)
	}
}

func (f ResourceEventHandlerFuncs) OnUpdate(oldObj, newObj object.Object) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(oldObj, newObj)
	}
}

func (f ResourceEventHandlerFuncs) OnDelete(obj object.Object) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(obj)
	}
}

// ResourceEventHandlerRegistration is a handler added to an informer.
type ResourceEventHandlerRegistration interface {
	// HasSynced is true once the informer has synced and this handler has
	// been told about every object of the initial list.
	HasSynced() bool
}

type notificationKind int

const (
	addNotification notificationKind = iota
	updateNotification
	deleteNotification
)

type notification struct {
	kind     notificationKind
	old, new object.Object
	initial  bool // part of the initial list: counts against HasSynced
}

// listener delivers notifications to one handler from its own goroutine,
// buffering without bound so the informer never waits for a handler.
type listener struct {
	handler        ResourceEventHandler
	informerSynced func() bool

	mu             sync.Mutex
	pending        []notification
	initialPending int

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

var _ ResourceEventHandlerRegistration = (*listener)(nil)

func newListener(h ResourceEventHandler, informerSynced func() bool) *listener {
	return &listener{
		handler:        h,
		informerSynced: informerSynced,
		wake:           make(chan struct{}, 1),
		stop:           make(chan struct{}),
		done:           make(chan struct{}),
	}
}

func (l *listener) HasSynced() bool {
	// Ask the informer first: once it has synced, every notification of the
	// initial list has been added here. (And never call it holding l.mu:
	// the informer adds notifications holding its own locks.)
	if !l.informerSynced() {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.initialPending == 0
}

func (l *listener) add(n notification) {
	l.mu.Lock()
	l.pending = append(l.pending, n)
	if n.initial {
		l.initialPending++
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *listener) run() {
	defer close(l.done)
	for {
		l.mu.Lock()
		batch := l.pending
		l.pending = nil
		l.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-l.wake:
				continue
			case <-l.stop:
				return
			}
		}
		for _, n := range batch {
			select {
			case <-l.stop:
				return
			default:
			}
			switch n.kind {
			case addNotification:
				l.handler.OnAdd(n.new)
			case updateNotification:
				l.handler.OnUpdate(n.old, n.new)
			case deleteNotification:
				l.handler.OnDelete(n.old)
			}
			if n.initial {
				l.mu.Lock()
				l.initialPending--
				l.mu.Unlock()
			}
		}
	}
}

// halt stops delivery and waits for the handler call in progress, if the
// listener was started.
func (l *listener) halt(started bool) {
	l.once.Do(func() { close(l.stop) })
	if started {
		<-l.done
	}
}
