package authorize

import (
	"context"
	"strings"
	"sync"
	"time"

	"podline.dev/pkg/clock"
)

// DefaultTTL is how long a decision is kept, allowed or denied: kube's
// delegated authorization keeps both for 10 s.
const DefaultTTL = 10 * time.Second

// maxEntries bounds the cache; past it, expired entries go, and if none
// had expired, all.
const maxEntries = 8192

// Cached keeps another Authorizer's decisions for a TTL. Errors are not
// kept.
type Cached struct {
	next  Authorizer
	ttl   time.Duration
	clock clock.Clock

	mu      sync.Mutex
	entries map[string]cachedDecision
}

type cachedDecision struct {
	d       Decision
	expires time.Time
}

var _ Authorizer = (*Cached)(nil)

// NewCached keeps next's decisions for ttl on clk.
func NewCached(next Authorizer, ttl time.Duration, clk clock.Clock) *Cached {
	return &Cached{next: next, ttl: ttl, clock: clk, entries: map[string]cachedDecision{}}
}

func key(a Attributes) string {
	return strings.Join([]string{a.User, strings.Join(a.Groups, ","), a.Verb, a.Group, a.Resource,
		a.Namespace, a.FieldSelector, a.LabelSelector, a.Path}, "\x00")
}

// Authorize implements Authorizer.
func (c *Cached) Authorize(ctx context.Context, a Attributes) (Decision, error) {
	k := key(a)
	now := c.clock.Now()
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.d, nil
	}
	d, err := c.next.Authorize(ctx, a)
	if err != nil {
		return d, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxEntries {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= maxEntries {
			clear(c.entries)
		}
	}
	c.entries[k] = cachedDecision{d: d, expires: now.Add(c.ttl)}
	return d, nil
}
