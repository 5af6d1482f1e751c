package cache

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"

	"podline.dev/pkg/object"
)

// SharedIndexInformer keeps an Indexer equal to one resource on the
// apiserver and tells any number of handlers about changes. It is shared:
// one list and one watch feed every controller in the process that asks for
// the resource (see SharedInformerFactory).
type SharedIndexInformer interface {
	// AddEventHandler adds a handler; one added after the informer has
	// started is first told about every cached object as an add.
	AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error)
	RemoveEventHandler(reg ResourceEventHandlerRegistration) error
	// GetStore and GetIndexer give the cache; its objects are read-only.
	GetStore() Store
	GetIndexer() Indexer
	AddIndexers(indexers Indexers) error
	// Run lists and watches until ctx is done; it blocks.
	Run(ctx context.Context)
	// HasSynced is true once the initial list is in the cache.
	HasSynced() bool
	LastSyncResourceVersion() string
	IsStopped() bool
}

// InformerOption configures a SharedIndexInformer.
type InformerOption func(*informerConfig)

type informerConfig struct {
	indexers  Indexers
	reflector []ReflectorOption
	log       *slog.Logger
}

// WithIndexers adds indexes to the informer's Indexer.
func WithIndexers(indexers Indexers) InformerOption {
	return func(c *informerConfig) {
		for name, fn := range indexers {
			c.indexers[name] = fn
		}
	}
}

// WithReflectorOptions passes options to the informer's Reflector: a resync
// period, a clock, a backoff, a page size, selectors.
func WithReflectorOptions(opts ...ReflectorOption) InformerOption {
	return func(c *informerConfig) { c.reflector = append(c.reflector, opts...) }
}

// WithInformerLogger sets the logger of the informer and its reflector.
func WithInformerLogger(l *slog.Logger) InformerOption {
	return func(c *informerConfig) { c.log = l }
}

type sharedIndexInformer struct {
	lw      ListerWatcher
	indexer Indexer
	fifo    *DeltaFIFO
	cfg     informerConfig

	// mu is held while a key's deltas are applied and while a handler is
	// added, so a new handler sees each object exactly once.
	mu        sync.Mutex
	listeners []*listener
	started   bool
	stopped   bool
	reflector *Reflector
}

var _ SharedIndexInformer = (*sharedIndexInformer)(nil)

// NewSharedIndexInformer returns an informer for the objects lw lists and
// watches, all of exemplar's type. Its Indexer keys objects by
// DeletionHandlingMetaNamespaceKeyFunc.
func NewSharedIndexInformer(lw ListerWatcher, exemplar object.Object, opts ...InformerOption) SharedIndexInformer {
	cfg := informerConfig{indexers: Indexers{}, log: slog.Default()}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.reflector = append([]ReflectorOption{WithExpectedType(exemplar), WithLogger(cfg.log)}, cfg.reflector...)
	indexer := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, cfg.indexers)
	return &sharedIndexInformer{
		lw:      lw,
		indexer: indexer,
		fifo:    NewDeltaFIFO(MetaNamespaceKeyFunc, indexer),
		cfg:     cfg,
	}
}

func (s *sharedIndexInformer) AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil, ErrInformerStopped
	}
	l := newListener(handler, s.HasSynced)
	s.listeners = append(s.listeners, l)
	if s.started {
		for _, obj := range s.indexer.List() {
			l.add(notification{kind: addNotification, new: obj, initial: true})
		}
		go l.run()
	}
	return l, nil
}

func (s *sharedIndexInformer) RemoveEventHandler(reg ResourceEventHandlerRegistration) error {
	s.mu.Lock()
	l, ok := reg.(*listener)
	i := slices.Index(s.listeners, l)
	if !ok || i < 0 {
		s.mu.Unlock()
		return errors.New("cache: handler registration does not belong to this informer")
	}
	s.listeners = slices.Delete(s.listeners, i, i+1)
	running := s.started && !s.stopped
	s.mu.Unlock()
	l.halt(running) // outside the lock: the handler may be calling into the informer
	return nil
}

func (s *sharedIndexInformer) GetStore() Store     { return s.indexer }
func (s *sharedIndexInformer) GetIndexer() Indexer { return s.indexer }

func (s *sharedIndexInformer) AddIndexers(indexers Indexers) error {
	return s.indexer.AddIndexers(indexers)
}

func (s *sharedIndexInformer) HasSynced() bool { return s.fifo.HasSynced() }

func (s *sharedIndexInformer) LastSyncResourceVersion() string {
	s.mu.Lock()
	r := s.reflector
	s.mu.Unlock()
	if r == nil {
		return ""
	}
	return r.LastSyncResourceVersion()
}

func (s *sharedIndexInformer) IsStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

func (s *sharedIndexInformer) Run(ctx context.Context) {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		s.cfg.log.Warn("informer is already running")
		return
	}
	s.started = true
	s.reflector = NewReflector(s.lw, s.fifo, s.cfg.reflector...)
	for _, l := range s.listeners {
		go l.run()
	}
	reflector := s.reflector
	s.mu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { reflector.Run(ctx) })
	wg.Go(s.processLoop)
	<-ctx.Done()
	s.fifo.Close()
	wg.Wait()

	s.mu.Lock()
	s.stopped = true
	listeners := s.listeners
	s.mu.Unlock()
	for _, l := range listeners {
		l.halt(true)
	}
}

func (s *sharedIndexInformer) processLoop() {
	for {
		_, err := s.fifo.Pop(s.handleDeltas)
		if errors.Is(err, ErrFIFOClosed) {
			return
		}
		if err != nil {
			s.cfg.log.Error("could not apply deltas to the cache", "err", err)
		}
	}
}

// handleDeltas applies one key's deltas to the indexer and tells the handlers.
func (s *sharedIndexInformer) handleDeltas(deltas Deltas, isInInitialList bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range deltas {
		switch d.Type {
		case Added, Updated, Replaced, Sync:
			old, exists, err := s.indexer.Get(d.Object)
			if err != nil {
				return err
			}
			if !exists {
				if err := s.indexer.Add(d.Object); err != nil {
					return err
				}
				s.distribute(notification{kind: addNotification, new: d.Object, initial: isInInitialList})
				continue
			}
			if err := s.indexer.Update(d.Object); err != nil {
				return err
			}
			if d.Type == Replaced && sameResourceVersion(old, d.Object) {
				continue // a relist found it unchanged
			}
			s.distribute(notification{kind: updateNotification, old: old, new: d.Object})
		case Deleted:
			if err := s.indexer.Delete(d.Object); err != nil {
				return err
			}
			s.distribute(notification{kind: deleteNotification, old: d.Object})
		}
	}
	return nil
}

func (s *sharedIndexInformer) distribute(n notification) {
	for _, l := range s.listeners {
		l.add(n)
	}
}

func sameResourceVersion(a, b object.Object) bool {
	rv := a.GetMetadata().GetResourceVersion()
	return rv != "" && rv == b.GetMetadata().GetResourceVersion()
}
