package cache

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"podline.dev/pkg/object"
)

// ThreadSafeStore is a map from keys to objects with indexes, safe for
// concurrent use. Objects handed in are stored as they are and objects
// handed out are the stored ones: callers treat both as read-only.
type ThreadSafeStore interface {
	Add(key string, obj object.Object) error
	Update(key string, obj object.Object) error
	Delete(key string)
	Get(key string) (object.Object, bool)
	List() []object.Object
	ListKeys() []string
	// Replace swaps in a whole new set of objects and rebuilds the indexes.
	Replace(items map[string]object.Object) error
	Index(indexName string, obj object.Object) ([]object.Object, error)
	IndexKeys(indexName, indexedValue string) ([]string, error)
	ListIndexFuncValues(indexName string) []string
	ByIndex(indexName, indexedValue string) ([]object.Object, error)
	GetIndexers() Indexers
	AddIndexers(newIndexers Indexers) error
}

// keySet is a set of object keys.
type keySet map[string]struct{}

// index maps an indexed value to the keys of the objects that have it.
type index map[string]keySet

type threadSafeMap struct {
	mu       sync.RWMutex
	items    map[string]object.Object
	indexers Indexers
	indices  map[string]index
}

var _ ThreadSafeStore = (*threadSafeMap)(nil)

// NewThreadSafeStore returns an empty store with the given indexes.
func NewThreadSafeStore(indexers Indexers) ThreadSafeStore {
	s := &threadSafeMap{items: map[string]object.Object{}, indexers: Indexers{}, indices: map[string]index{}}
	for name, fn := range indexers {
		s.indexers[name] = fn
		s.indices[name] = index{}
	}
	return s
}

// indexValues is what one index function said about one object.
type indexValues struct {
	name   string
	values []string
}

// computeLocked runs every index function on obj; it fails without side effects.
func (s *threadSafeMap) computeLocked(obj object.Object) ([]indexValues, error) {
	if len(s.indexers) == 0 {
		return nil, nil
	}
	out := make([]indexValues, 0, len(s.indexers))
	for name, fn := range s.indexers {
		vs, err := fn(obj)
		if err != nil {
			return nil, fmt.Errorf("cache: index %q of %s: %w", name, object.Key(obj), err)
		}
		out = append(out, indexValues{name, vs})
	}
	return out, nil
}

func (s *threadSafeMap) Add(key string, obj object.Object) error { return s.Update(key, obj) }

func (s *threadSafeMap) Update(key string, obj object.Object) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	newValues, err := s.computeLocked(obj)
	if err != nil {
		return err
	}
	old := s.items[key]
	s.items[key] = obj
	for _, nv := range newValues {
		var oldValues []string
		if old != nil {
			oldValues, _ = s.indexers[nv.name](old) // succeeded when old was stored
		}
		if slices.Equal(oldValues, nv.values) {
			continue // the common case: an update that keeps the namespace
		}
		idx := s.indices[nv.name]
		idx.remove(key, oldValues)
		idx.add(key, nv.values)
	}
	return nil
}

func (s *threadSafeMap) Delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.items[key]
	if !ok {
		return
	}
	for name, fn := range s.indexers {
		values, _ := fn(old)
		s.indices[name].remove(key, values)
	}
	delete(s.items, key)
}

func (s *threadSafeMap) Get(key string) (object.Object, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	obj, ok := s.items[key]
	return obj, ok
}

func (s *threadSafeMap) List() []object.Object {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Collect(maps.Values(s.items))
}

func (s *threadSafeMap) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Collect(maps.Keys(s.items))
}

func (s *threadSafeMap) Replace(items map[string]object.Object) error {
	indices := make(map[string]index, len(s.indexers))
	s.mu.Lock()
	defer s.mu.Unlock()
	for name := range s.indexers {
		indices[name] = index{}
	}
	for key, obj := range items {
		values, err := s.computeLocked(obj)
		if err != nil {
			return err
		}
		for _, nv := range values {
			indices[nv.name].add(key, nv.values)
		}
	}
	s.items = maps.Clone(items)
	if s.items == nil {
		s.items = map[string]object.Object{}
	}
	s.indices = indices
	return nil
}

func (s *threadSafeMap) Index(indexName string, obj object.Object) ([]object.Object, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	fn, idx, err := s.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	values, err := fn(obj)
	if err != nil {
		return nil, err
	}
	keys := keySet{}
	for _, v := range values {
		for k := range idx[v] {
			keys[k] = struct{}{}
		}
	}
	return s.objectsLocked(keys), nil
}

func (s *threadSafeMap) IndexKeys(indexName, indexedValue string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, idx, err := s.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	return slices.Collect(maps.Keys(idx[indexedValue])), nil
}

func (s *threadSafeMap) ListIndexFuncValues(indexName string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Collect(maps.Keys(s.indices[indexName]))
}

func (s *threadSafeMap) ByIndex(indexName, indexedValue string) ([]object.Object, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, idx, err := s.indexLocked(indexName)
	if err != nil {
		return nil, err
	}
	return s.objectsLocked(idx[indexedValue]), nil
}

func (s *threadSafeMap) GetIndexers() Indexers {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return maps.Clone(s.indexers)
}

func (s *threadSafeMap) AddIndexers(newIndexers Indexers) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	built := make(map[string]index, len(newIndexers))
	for name, fn := range newIndexers {
		if _, exists := s.indexers[name]; exists {
			return fmt.Errorf("cache: index %q already exists", name)
		}
		idx := index{}
		for key, obj := range s.items {
			values, err := fn(obj)
			if err != nil {
				return fmt.Errorf("cache: index %q of %s: %w", name, key, err)
			}
			idx.add(key, values)
		}
		built[name] = idx
	}
	for name, fn := range newIndexers {
		s.indexers[name] = fn
		s.indices[name] = built[name]
	}
	return nil
}

func (s *threadSafeMap) indexLocked(name string) (IndexFunc, index, error) {
	fn, ok := s.indexers[name]
	if !ok {
		return nil, nil, fmt.Errorf("%w: %q", ErrIndexNotFound, name)
	}
	return fn, s.indices[name], nil
}

func (s *threadSafeMap) objectsLocked(keys keySet) []object.Object {
	out := make([]object.Object, 0, len(keys))
	for k := range keys {
		out = append(out, s.items[k])
	}
	return out
}

func (idx index) add(key string, values []string) {
	for _, v := range values {
		set := idx[v]
		if set == nil {
			set = keySet{}
			idx[v] = set
		}
		set[key] = struct{}{}
	}
}

func (idx index) remove(key string, values []string) {
	for _, v := range values {
		set := idx[v]
		delete(set, key)
		if len(set) == 0 {
			delete(idx, v) // don't keep an empty set per value ever seen
		}
	}
}
