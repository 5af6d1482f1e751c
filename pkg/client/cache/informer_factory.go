package cache

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/pkg/object"
)

// SharedInformerFactory hands out one SharedIndexInformer per resource key,
// so that every controller in a process that watches pods shares one list,
// one watch and one cache. Register informers with ForResource, then Start
// them and WaitForCacheSync before starting workers.
type SharedInformerFactory struct {
	defaultResync time.Duration
	opts          []InformerOption

	mu        sync.Mutex
	informers map[string]factoryEntry
	started   map[string]bool
	wg        sync.WaitGroup
}

type factoryEntry struct {
	informer SharedIndexInformer
	typ      protoreflect.FullName
}

// NewSharedInformerFactory returns a factory whose informers resync every
// defaultResync (0: never) and get opts.
func NewSharedInformerFactory(defaultResync time.Duration, opts ...InformerOption) *SharedInformerFactory {
	return &SharedInformerFactory{
		defaultResync: defaultResync,
		opts:          opts,
		informers:     map[string]factoryEntry{},
		started:       map[string]bool{},
	}
}

// ForResource returns the informer for key, creating it on first use with
// the ListerWatcher from newLW (not called again for the same key) and a
// namespace index. The key names one watch: the resource ("pods",
// "deployments.apps"), plus whatever narrows it in newLW ("pods,
// spec.nodeName=n1"). Asking for a key with an exemplar of another type is
// a programming error and panics.
func (f *SharedInformerFactory) ForResource(key string, newLW func() ListerWatcher, exemplar object.Object) SharedIndexInformer {
	f.mu.Lock()
	defer f.mu.Unlock()
	typ := typeName(exemplar)
	if e, ok := f.informers[key]; ok {
		if e.typ != typ {
			panic(fmt.Sprintf("cache: the informer for %q holds %s, not %s", key, e.typ, typ))
		}
		return e.informer
	}
	opts := append([]InformerOption{
		WithIndexers(Indexers{NamespaceIndex: MetaNamespaceIndexFunc}),
		WithReflectorOptions(WithName(key), WithResyncPeriod(f.defaultResync)),
	}, f.opts...)
	inf := NewSharedIndexInformer(newLW(), exemplar, opts...)
	f.informers[key] = factoryEntry{informer: inf, typ: typ}
	return inf
}

// Start runs every informer registered and not yet started, until ctx is
// done. It does not block; call it again after registering more informers.
func (f *SharedInformerFactory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for key, e := range f.informers {
		if f.started[key] {
			continue
		}
		f.started[key] = true
		f.wg.Go(func() { e.informer.Run(ctx) })
	}
}

// WaitForCacheSync waits until every started informer has synced or ctx is
// done, and reports each one's state by key.
func (f *SharedInformerFactory) WaitForCacheSync(ctx context.Context) map[string]bool {
	f.mu.Lock()
	started := map[string]SharedIndexInformer{}
	for key, e := range f.informers {
		if f.started[key] {
			started[key] = e.informer
		}
	}
	f.mu.Unlock()
	res := make(map[string]bool, len(started))
	for key, inf := range started {
		res[key] = WaitForCacheSync(ctx, inf.HasSynced)
	}
	return res
}

// Shutdown waits for the started informers to stop; cancel Start's context first.
func (f *SharedInformerFactory) Shutdown() { f.wg.Wait() }
