package cache

import (
	"podline.dev/pkg/object"
)

// IndexFunc computes the values an object is indexed under, such as its
// namespace or the node it runs on. It must be a pure function of the object.
type IndexFunc func(obj object.Object) ([]string, error)

// Indexers names the index functions of an Indexer.
type Indexers map[string]IndexFunc

// NamespaceIndex is the name under which MetaNamespaceIndexFunc is usually registered.
const NamespaceIndex = "namespace"

// MetaNamespaceIndexFunc indexes an object by its namespace ("" for cluster-scoped ones).
func MetaNamespaceIndexFunc(obj object.Object) ([]string, error) {
	m := obj.GetMetadata()
	if m == nil {
		return nil, ErrNoMetadata
	}
	return []string{m.GetNamespace()}, nil
}

// Indexer is a Store with indexes: it can list objects by an indexed value.
type Indexer interface {
	Store
	// Index returns the objects that share any of obj's values of the named index.
	Index(indexName string, obj object.Object) ([]object.Object, error)
	// IndexKeys returns the keys of the objects indexed under indexedValue.
	IndexKeys(indexName, indexedValue string) ([]string, error)
	// ListIndexFuncValues returns every value the named index holds.
	ListIndexFuncValues(indexName string) []string
	// ByIndex returns the objects indexed under indexedValue.
	ByIndex(indexName, indexedValue string) ([]object.Object, error)
	GetIndexers() Indexers
	// AddIndexers adds indexes and builds them over the objects already stored.
	AddIndexers(newIndexers Indexers) error
}
