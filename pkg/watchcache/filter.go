package watchcache

import (
	"podline.dev/pkg/object"
)

// Filter selects the objects a List returns and a watcher is told about.
// The zero Filter matches everything; a nil func matches everything.
//
// Label and Field run under the cache's lock, inside Apply: they must be
// fast, must not block, and must not call into the Cache.
type Filter struct {
	Namespace string
	Label     func(labels map[string]string) bool
	Field     func(obj object.Object) bool
	// Triggered says Field matches only objects whose trigger value (see
	// WithTrigger) is Trigger; the cache then indexes the watcher by it.
	// Without a trigger function on the cache it is ignored.
	Triggered bool
	Trigger   string
}

// Matches reports whether obj passes every part of the filter.
func (f Filter) Matches(obj object.Object) bool {
	m := obj.GetMetadata()
	if f.Namespace != "" && m.GetNamespace() != f.Namespace {
		return false
	}
	if f.Label != nil && !f.Label(m.GetLabels()) {
		return false
	}
	if f.Field != nil && !f.Field(obj) {
		return false
	}
	return true
}

func (f Filter) matchesAll() bool {
	return f.Namespace == "" && f.Label == nil && f.Field == nil
}
