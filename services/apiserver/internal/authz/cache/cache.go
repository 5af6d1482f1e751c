package cache

import (
	"context"
	"log/slog"

	clientcache "podline.dev/pkg/client/cache"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	metav1 "podline.dev/proto/meta/v1"
)

// Source is a registry as the cache reads it.
type Source interface {
	List(ctx context.Context, opts *metav1.ListRequest) ([]object.Object, *metav1.ListMeta, error)
	Watch(ctx context.Context, opts *metav1.ListRequest) (watch.Interface, error)
}

// Cache is one resource's objects, kept current from a Source.
type Cache struct {
	clientcache.Indexer
	reflector *clientcache.Reflector
}

// New returns a cache of src's objects with the given indexes (and the
// namespace index); Run fills it.
func New(name string, src Source, indexers clientcache.Indexers) *Cache {
	all := clientcache.Indexers{clientcache.NamespaceIndex: clientcache.MetaNamespaceIndexFunc}
	for k, f := range indexers {
		all[k] = f
	}
	idx := clientcache.NewIndexer(clientcache.MetaNamespaceKeyFunc, all)
	return &Cache{
		Indexer: idx,
		reflector: clientcache.NewReflector(listWatch{src}, idx,
			clientcache.WithName("authz-"+name), clientcache.WithLogger(slog.Default())),
	}
}

// Run lists and watches until ctx ends.
func (c *Cache) Run(ctx context.Context) { c.reflector.Run(ctx) }

// HasSynced reports whether the first list has been stored.
func (c *Cache) HasSynced() bool { return c.reflector.LastSyncResourceVersion() != "" }

// Get returns the object namespace/name ("" namespace for cluster-scoped ones).
func (c *Cache) Get(namespace, name string) (object.Object, bool) {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, ok, err := c.GetByKey(key)
	return obj, ok && err == nil
}

// InNamespace lists the objects of one namespace.
func (c *Cache) InNamespace(namespace string) []object.Object {
	out, _ := c.ByIndex(clientcache.NamespaceIndex, namespace)
	return out
}

// listWatch adapts a registry to the Reflector's ListerWatcher.
type listWatch struct{ src Source }

func (l listWatch) List(ctx context.Context, opts *metav1.ListRequest) ([]object.Object, string, error) {
	items, lm, err := l.src.List(ctx, opts)
	if err != nil {
		return nil, "", err
	}
	return items, lm.GetResourceVersion(), nil
}

func (l listWatch) Watch(ctx context.Context, opts *metav1.ListRequest) (watch.Interface, error) {
	return l.src.Watch(ctx, opts)
}
