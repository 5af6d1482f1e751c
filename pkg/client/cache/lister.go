package cache

import (
	"fmt"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/labels"
	"podline.dev/pkg/object"
)

// Lister reads objects of type T from an informer's Indexer. The objects it
// returns are the cached ones, shared with every other reader: they are
// read-only. Copy one with object.Copy before changing it, e.g. to update it.
type Lister[T object.Object] struct {
	indexer  Indexer
	resource apierrors.GroupResource
}

// NewLister returns a Lister over indexer; resource names the objects in
// NotFound errors (`pods "web" not found`).
func NewLister[T object.Object](indexer Indexer, resource apierrors.GroupResource) Lister[T] {
	return Lister[T]{indexer: indexer, resource: resource}
}

// List returns the objects whose labels match selector; nil selects all.
// The order is unspecified.
func (l Lister[T]) List(selector labels.Selector) ([]T, error) {
	return l.filter(l.indexer.List(), selector)
}

// Get returns the object namespace/name (namespace "" for cluster-scoped
// objects), or a NotFound API error.
func (l Lister[T]) Get(namespace, name string) (T, error) {
	var zero T
	obj, exists, err := l.indexer.GetByKey(object.KeyOf(namespace, name))
	if err != nil {
		return zero, err
	}
	if !exists {
		return zero, apierrors.NewNotFound(l.resource, name)
	}
	t, ok := obj.(T)
	if !ok {
		return zero, l.wrongType(obj)
	}
	return t, nil
}

// Namespace returns a Lister for one namespace.
func (l Lister[T]) Namespace(namespace string) NamespaceLister[T] {
	return NamespaceLister[T]{lister: l, namespace: namespace}
}

func (l Lister[T]) filter(objs []object.Object, selector labels.Selector) ([]T, error) {
	if selector == nil {
		selector = labels.Everything()
	}
	out := make([]T, 0, len(objs))
	for _, obj := range objs {
		if !selector.Matches(obj.GetMetadata().GetLabels()) {
			continue
		}
		t, ok := obj.(T)
		if !ok {
			return nil, l.wrongType(obj)
		}
		out = append(out, t)
	}
	return out, nil
}

func (l Lister[T]) wrongType(obj object.Object) error {
	var zero T
	return fmt.Errorf("cache: lister of %s holds %s %s of type %T, want %T",
		l.resource, l.resource, object.Key(obj), obj, zero)
}

// NamespaceLister is a Lister for the objects of one namespace.
type NamespaceLister[T object.Object] struct {
	lister    Lister[T]
	namespace string
}

// List returns the namespace's objects whose labels match selector; nil
// selects all. It uses the NamespaceIndex when the indexer has it.
func (n NamespaceLister[T]) List(selector labels.Selector) ([]T, error) {
	objs, err := n.lister.indexer.ByIndex(NamespaceIndex, n.namespace)
	if err != nil { // no namespace index: scan
		objs = nil
		for _, obj := range n.lister.indexer.List() {
			if obj.GetMetadata().GetNamespace() == n.namespace {
				objs = append(objs, obj)
			}
		}
	}
	return n.lister.filter(objs, selector)
}

// Get returns the named object of the namespace, or a NotFound API error.
func (n NamespaceLister[T]) Get(name string) (T, error) { return n.lister.Get(n.namespace, name) }
