// Package object is the minimal view of an API object that generic code
// (storage, watch, informers, controllers) works with: a proto message with
// Kubernetes ObjectMeta. Every generated kind satisfies Object.
package object

import (
	"google.golang.org/protobuf/proto"

	metav1 "podline.dev/proto/meta/v1"
)

// Object is any API kind.
type Object interface {
	proto.Message
	GetMetadata() *metav1.ObjectMeta
}

// Key is "namespace/name" for namespaced objects and "name" otherwise, as in client-go's cache keys.
func Key(o Object) string {
	m := o.GetMetadata()
	return KeyOf(m.GetNamespace(), m.GetName())
}

// KeyOf builds a cache key from its parts.
func KeyOf(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Copy returns a deep copy of o with its concrete type; cached objects are
// read-only, so callers copy before they change one.
func Copy[T proto.Message](o T) T {
	return proto.Clone(o).(T)
}
