package record

import (
	"container/list"

	corev1 "podline.dev/proto/core/v1"
)

// lru remembers the last Event written per aggregation key, forgetting the
// least recently used beyond its size. Only the writer goroutine uses it.
type lru struct {
	size  int
	order *list.List // front: most recent; values are *lruEntry
	items map[string]*list.Element
}

type lruEntry struct {
	key string
	ev  *corev1.Event
}

func newLRU(size int) *lru {
	return &lru{size: max(size, 1), order: list.New(), items: map[string]*list.Element{}}
}

func (c *lru) get(key string) (*corev1.Event, bool) {
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry).ev, true
}

func (c *lru) add(key string, ev *corev1.Event) {
	if e, ok := c.items[key]; ok {
		e.Value.(*lruEntry).ev = ev
		c.order.MoveToFront(e)
		return
	}
	c.items[key] = c.order.PushFront(&lruEntry{key: key, ev: ev})
	if c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*lruEntry).key)
	}
}
