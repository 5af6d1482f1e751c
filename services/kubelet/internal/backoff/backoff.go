package backoff

import (
	"sync"
	"time"

	"podline.dev/pkg/clock"
)

// Kubernetes' values for container restarts and image pulls.
const (
	DefaultInitial = 10 * time.Second
	DefaultMax     = 300 * time.Second
)

type entry struct {
	backoff    time.Duration
	lastUpdate time.Time
}

// Backoff tracks one backoff per key. It is safe for concurrent use.
type Backoff struct {
	mu      sync.Mutex
	clock   clock.Clock
	initial time.Duration
	max     time.Duration
	entries map[string]*entry
}

// New returns a Backoff that starts at initial and doubles up to max.
func New(c clock.Clock, initial, max time.Duration) *Backoff {
	return &Backoff{clock: c, initial: initial, max: max, entries: map[string]*entry{}}
}

// Get is key's current backoff (0 when it has none).
func (b *Backoff) Get(key string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.entries[key]; e != nil {
		return e.backoff
	}
	return 0
}

// Next moves key's backoff one step: initial the first time (or after the
// entry expired: untouched for twice the maximum since eventTime), then
// doubled up to the maximum.
func (b *Backoff) Next(key string, eventTime time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[key]
	if e == nil || b.expired(e, eventTime) {
		b.entries[key] = &entry{backoff: b.initial, lastUpdate: b.clock.Now()}
		return
	}
	e.backoff = min(2*e.backoff, b.max)
	e.lastUpdate = b.clock.Now()
}

// IsInBackOffSince reports whether key's backoff, counted from eventTime
// (when the container last finished), has not passed yet.
func (b *Backoff) IsInBackOffSince(key string, eventTime time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[key]
	if e == nil || b.expired(e, eventTime) {
		return false
	}
	return b.clock.Since(eventTime) < e.backoff
}

// IsInBackOffSinceUpdate reports whether less than key's backoff has
// passed between its last step and eventTime (image pulls: one failed
// pull holds the next ones back for the backoff).
func (b *Backoff) IsInBackOffSinceUpdate(key string, eventTime time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[key]
	if e == nil || b.expired(e, eventTime) {
		return false
	}
	return eventTime.Sub(e.lastUpdate) < e.backoff
}

// RemainingSinceUpdate is how long key stays in backoff counted from its
// last step (0 when it does not).
func (b *Backoff) RemainingSinceUpdate(key string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[key]
	if e == nil {
		return 0
	}
	return max(e.backoff-b.clock.Since(e.lastUpdate), 0)
}

// Remaining is how long key stays in backoff counted from eventTime (0
// when it does not).
func (b *Backoff) Remaining(key string, eventTime time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[key]
	if e == nil || b.expired(e, eventTime) {
		return 0
	}
	return max(e.backoff-b.clock.Since(eventTime), 0)
}

// Reset forgets key.
func (b *Backoff) Reset(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, key)
}

// GC forgets entries untouched for twice the maximum.
func (b *Backoff) GC() {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	for k, e := range b.entries {
		if now.Sub(e.lastUpdate) > 2*b.max {
			delete(b.entries, k)
		}
	}
}

// expired: the entry's last step is more than twice the maximum before
// eventTime, so the failures it counted are history.
func (b *Backoff) expired(e *entry, eventTime time.Time) bool {
	return eventTime.Sub(e.lastUpdate) > 2*b.max
}
