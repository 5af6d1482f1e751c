package cache

import (
	"fmt"
	"strings"

	"podline.dev/pkg/object"
)

// Store holds objects by key. It is what a Reflector fills and what a
// Lister reads. Objects in a Store are shared and read-only: copy one
// (object.Copy) before changing it.
type Store interface {
	Add(obj object.Object) error
	Update(obj object.Object) error
	Delete(obj object.Object) error
	List() []object.Object
	ListKeys() []string
	Get(obj object.Object) (item object.Object, exists bool, err error)
	GetByKey(key string) (item object.Object, exists bool, err error)
	// Replace makes list the whole content; resourceVersion is the revision it was read at.
	Replace(list []object.Object, resourceVersion string) error
	// Resync does nothing for a Store; a DeltaFIFO queues a Sync for every known object.
	Resync() error
}

// KeyFunc gives an object's key in a Store.
type KeyFunc func(obj object.Object) (string, error)

// MetaNamespaceKeyFunc is "namespace/name", or "name" for cluster-scoped objects.
func MetaNamespaceKeyFunc(obj object.Object) (string, error) {
	m := obj.GetMetadata()
	if m == nil {
		return "", ErrNoMetadata
	}
	if m.GetName() == "" {
		return "", fmt.Errorf("cache: object has no name")
	}
	return object.KeyOf(m.GetNamespace(), m.GetName()), nil
}

// DeletionHandlingMetaNamespaceKeyFunc is MetaNamespaceKeyFunc that also
// takes a DeletedFinalStateUnknown and returns its Key.
func DeletionHandlingMetaNamespaceKeyFunc(obj object.Object) (string, error) {
	if d, ok := obj.(DeletedFinalStateUnknown); ok {
		return d.Key, nil
	}
	return MetaNamespaceKeyFunc(obj)
}

// SplitMetaNamespaceKey splits a key made by MetaNamespaceKeyFunc.
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	parts := strings.Split(key, "/")
	switch len(parts) {
	case 1:
		return "", parts[0], nil
	case 2:
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("cache: unexpected key format: %q", key)
}

// cache is a Store and Indexer over a ThreadSafeStore.
type cache struct {
	storage ThreadSafeStore
	keyFunc KeyFunc
}

var _ Indexer = (*cache)(nil)

// NewStore returns a Store without indexes. A nil keyFunc means
// DeletionHandlingMetaNamespaceKeyFunc.
func NewStore(keyFunc KeyFunc) Store { return NewIndexer(keyFunc, nil) }

// NewIndexer returns an Indexer with the given indexes. A nil keyFunc means
// DeletionHandlingMetaNamespaceKeyFunc.
func NewIndexer(keyFunc KeyFunc, indexers Indexers) Indexer {
	if keyFunc == nil {
		keyFunc = DeletionHandlingMetaNamespaceKeyFunc
	}
	return &cache{storage: NewThreadSafeStore(indexers), keyFunc: keyFunc}
}

func (c *cache) key(obj object.Object) (string, error) {
	k, err := c.keyFunc(obj)
	if err != nil {
		return "", KeyError{Obj: obj, Err: err}
	}
	return k, nil
}

func (c *cache) Add(obj object.Object) error {
	k, err := c.key(obj)
	if err != nil {
		return err
	}
	return c.storage.Add(k, obj)
}

func (c *cache) Update(obj object.Object) error {
	k, err := c.key(obj)
	if err != nil {
		return err
	}
	return c.storage.Update(k, obj)
}

func (c *cache) Delete(obj object.Object) error {
	k, err := c.key(obj)
	if err != nil {
		return err
	}
	c.storage.Delete(k)
	return nil
}

func (c *cache) List() []object.Object { return c.storage.List() }
func (c *cache) ListKeys() []string    { return c.storage.ListKeys() }

func (c *cache) Get(obj object.Object) (object.Object, bool, error) {
	k, err := c.key(obj)
	if err != nil {
		return nil, false, err
	}
	return c.GetByKey(k)
}

func (c *cache) GetByKey(key string) (object.Object, bool, error) {
	obj, ok := c.storage.Get(key)
	return obj, ok, nil
}

func (c *cache) Replace(list []object.Object, _ string) error {
	items := make(map[string]object.Object, len(list))
	for _, obj := range list {
		k, err := c.key(obj)
		if err != nil {
			return err
		}
		items[k] = obj
	}
	return c.storage.Replace(items)
}

func (c *cache) Resync() error { return nil }

func (c *cache) Index(indexName string, obj object.Object) ([]object.Object, error) {
	return c.storage.Index(indexName, obj)
}

func (c *cache) IndexKeys(indexName, indexedValue string) ([]string, error) {
	return c.storage.IndexKeys(indexName, indexedValue)
}

func (c *cache) ListIndexFuncValues(indexName string) []string {
	return c.storage.ListIndexFuncValues(indexName)
}

func (c *cache) ByIndex(indexName, indexedValue string) ([]object.Object, error) {
	return c.storage.ByIndex(indexName, indexedValue)
}

func (c *cache) GetIndexers() Indexers { return c.storage.GetIndexers() }

func (c *cache) AddIndexers(newIndexers Indexers) error { return c.storage.AddIndexers(newIndexers) }
