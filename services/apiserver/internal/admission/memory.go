package admission

import (
	"context"
	"sort"
	"sync"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
)

// Memory is an in-memory Getter and Lister of one resource, for tests and
// for callers without a server.
type Memory struct {
	Resource string // plural name for NotFound messages ("namespaces")
	Group    string

	mu   sync.Mutex
	objs map[string]object.Object
}

var (
	_ Getter = (*Memory)(nil)
	_ Lister = (*Memory)(nil)
)

// NewMemory returns a store of group/resource holding objs.
func NewMemory(group, resource string, objs ...object.Object) *Memory {
	m := &Memory{Resource: resource, Group: group, objs: map[string]object.Object{}}
	for _, o := range objs {
		m.Put(o)
	}
	return m
}

// Put adds or replaces an object.
func (m *Memory) Put(o object.Object) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objs[object.Key(o)] = o
}

// Get implements Getter.
func (m *Memory) Get(_ context.Context, namespace, name string) (object.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.objs[object.KeyOf(namespace, name)]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(apierrors.GroupResource{Group: m.Group, Resource: m.Resource}, name)
}

// List implements Lister.
func (m *Memory) List(_ context.Context, namespace string) ([]object.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]string, 0, len(m.objs))
	for k, o := range m.objs {
		if namespace == "" || o.GetMetadata().GetNamespace() == namespace {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]object.Object, len(keys))
	for i, k := range keys {
		out[i] = m.objs[k]
	}
	return out, nil
}
