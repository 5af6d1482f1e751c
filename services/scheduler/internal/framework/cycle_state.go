package framework

import (
	"maps"
	"sync"
	"sync/atomic"
)

// StateData is what a plugin keeps in the CycleState between its
// extension points (PreFilter computes, Filter reads).
type StateData interface {
	// Clone copies the data; preemption clones the state to try victims.
	Clone() StateData
}

// StateKey names a plugin's data, conventionally "PreFilter" + plugin name.
type StateKey string

// CycleState is the scratch space of one Pod's scheduling attempt. Filter
// and Score read it from many goroutines at once, for every node; writes
// are few (PreFilter, PreScore, Reserve). So reads load an immutable map
// through an atomic pointer, without a lock, and each write copies the map.
type CycleState struct {
	storage atomic.Pointer[map[StateKey]StateData]
	writeMu sync.Mutex
	// SkipFilterPlugins and SkipScorePlugins hold the plugins whose
	// PreFilter/PreScore returned Skip.
	SkipFilterPlugins map[string]bool
	SkipScorePlugins  map[string]bool
}

// NewCycleState returns an empty CycleState.
func NewCycleState() *CycleState {
	return &CycleState{}
}

// Read returns the data at key, or ErrNotFound.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	if m := c.storage.Load(); m != nil {
		if v, ok := (*m)[key]; ok {
			return v, nil
		}
	}
	return nil, ErrNotFound
}

// Write stores data at key.
func (c *CycleState) Write(key StateKey, data StateData) {
	c.update(func(m map[StateKey]StateData) { m[key] = data })
}

// Delete removes key.
func (c *CycleState) Delete(key StateKey) {
	c.update(func(m map[StateKey]StateData) { delete(m, key) })
}

func (c *CycleState) update(f func(map[StateKey]StateData)) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	next := map[StateKey]StateData{}
	if m := c.storage.Load(); m != nil {
		next = maps.Clone(*m)
	}
	f(next)
	c.storage.Store(&next)
}

// Clone deep-copies the state (each StateData by its Clone).
func (c *CycleState) Clone() *CycleState {
	if c == nil {
		return nil
	}
	out := NewCycleState()
	if m := c.storage.Load(); m != nil {
		next := make(map[StateKey]StateData, len(*m))
		for k, v := range *m {
			next[k] = v.Clone()
		}
		out.storage.Store(&next)
	}
	out.SkipFilterPlugins = maps.Clone(c.SkipFilterPlugins)
	out.SkipScorePlugins = maps.Clone(c.SkipScorePlugins)
	return out
}

// ReadAs reads key and asserts its type.
func ReadAs[T StateData](c *CycleState, key StateKey) (T, error) {
	var zero T
	d, err := c.Read(key)
	if err != nil {
		return zero, err
	}
	t, ok := d.(T)
	if !ok {
		return zero, ErrNotFound
	}
	return t, nil
}
