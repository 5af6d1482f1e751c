package controller

import (
	"sync"
	"time"

	"podline.dev/pkg/clock"
)

// ExpectationsTimeout is how long a controller waits for its informer to
// show the creations and deletions it made before it syncs anyway (5 min,
// as in Kubernetes): a lost watch event must not wedge it for ever.
const ExpectationsTimeout = 5 * time.Minute

// Expectations remember, per controller key, how many creations and which
// deletions a controller is still waiting to see in its informer. A sync that
// creates pods records them; the informer's add events count them down; until
// they are all seen, the controller does not manage replicas again, because
// its cache does not show its own writes yet and it would create duplicates.
// Deletions are tracked by pod key so that a pod seen both as marked for
// deletion and as deleted counts once (Kubernetes'
// UIDTrackingControllerExpectations).
type Expectations struct {
	clock clock.Clock
	ttl   time.Duration

	mu    sync.Mutex
	items map[string]*expectation
}

type expectation struct {
	add, del   int
	timestamp  time.Time
	deleteKeys map[string]struct{}
}

// NewExpectations returns empty expectations on clk.
func NewExpectations(clk clock.Clock) *Expectations {
	return &Expectations{clock: clk, ttl: ExpectationsTimeout, items: map[string]*expectation{}}
}

// Satisfied reports whether key may be synced: it has no expectations, all
// were observed, or they expired.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp, ok := e.items[key]
	if !ok {
		return true
	}
	if exp.add <= 0 && exp.del <= 0 {
		return true
	}
	return e.clock.Since(exp.timestamp) > e.ttl
}

// ExpectCreations records that n creations are on their way.
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.items[key] = &expectation{add: n, timestamp: e.clock.Now()}
}

// ExpectDeletions records that the objects with podKeys are being deleted.
func (e *Expectations) ExpectDeletions(key string, podKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	keys := make(map[string]struct{}, len(podKeys))
	for _, k := range podKeys {
		keys[k] = struct{}{}
	}
	e.items[key] = &expectation{del: len(keys), timestamp: e.clock.Now(), deleteKeys: keys}
}

// CreationObserved counts one expected creation as seen (or as never
// coming, when the create was not made or failed).
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if exp, ok := e.items[key]; ok && exp.add > 0 {
		exp.add--
	}
}

// DeletionObserved counts the deletion of podKey as seen, once.
func (e *Expectations) DeletionObserved(key, podKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp, ok := e.items[key]
	if !ok {
		return
	}
	if _, waiting := exp.deleteKeys[podKey]; !waiting {
		return
	}
	delete(exp.deleteKeys, podKey)
	exp.del--
}

// Delete forgets key's expectations, as when its controller is deleted.
func (e *Expectations) Delete(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.items, key)
}

// Pending returns the creations and deletions key still waits for.
func (e *Expectations) Pending(key string) (add, del int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if exp, ok := e.items[key]; ok {
		return exp.add, exp.del
	}
	return 0, 0
}
