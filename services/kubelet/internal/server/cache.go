package server

import (
	"context"
	"strings"
	"sync"
	"time"

	"podline.dev/pkg/clock"
)

// Kubernetes' kubelet caches webhook decisions this long
// (--authorization-webhook-cache-authorized-ttl, -unauthorized-ttl).
const (
	DefaultAllowedTTL = 5 * time.Minute
	DefaultDeniedTTL  = 30 * time.Second
)

// maxCachedDecisions bounds the cache; when it is full, expired entries go,
// and if none has expired it starts over.
const maxCachedDecisions = 4096

// CachedAuthorizer remembers next's decisions: an allow for allowedTTL, a
// refusal for deniedTTL. Errors are not remembered.
type CachedAuthorizer struct {
	next                  Authorizer
	clock                 clock.Clock
	allowedTTL, deniedTTL time.Duration

	mu      sync.Mutex
	entries map[string]decision
}

type decision struct {
	allowed bool
	reason  string
	expires time.Time
}

var _ Authorizer = (*CachedAuthorizer)(nil)

// NewCachedAuthorizer caches next's decisions on clk.
func NewCachedAuthorizer(next Authorizer, clk clock.Clock, allowedTTL, deniedTTL time.Duration) *CachedAuthorizer {
	return &CachedAuthorizer{next: next, clock: clk, allowedTTL: allowedTTL, deniedTTL: deniedTTL, entries: map[string]decision{}}
}

// Authorize answers from the cache while the decision is fresh.
func (c *CachedAuthorizer) Authorize(ctx context.Context, a Attributes) (bool, string, error) {
	key := strings.Join([]string{a.User.Name, strings.Join(a.User.Groups, ","), a.Verb, a.Resource, a.Subresource, a.Name}, "\x00")
	now := c.clock.Now()
	c.mu.Lock()
	d, ok := c.entries[key]
	c.mu.Unlock()
	if ok && now.Before(d.expires) {
		return d.allowed, d.reason, nil
	}
	allowed, reason, err := c.next.Authorize(ctx, a)
	if err != nil {
		return false, "", err
	}
	ttl := c.deniedTTL
	if allowed {
		ttl = c.allowedTTL
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= maxCachedDecisions {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= maxCachedDecisions {
			c.entries = map[string]decision{}
		}
	}
	c.entries[key] = decision{allowed: allowed, reason: reason, expires: now.Add(ttl)}
	return allowed, reason, nil
}
