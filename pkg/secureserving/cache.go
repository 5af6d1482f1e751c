package secureserving

import (
	"context"
	"crypto/sha256"
	"slices"
	"strings"
	"sync"
	"time"

	"podline.dev/pkg/clock"
)

// Kubernetes' delegated authentication and authorization keep the
// apiserver's answers this long (--authentication-token-webhook-cache-ttl,
// --authorization-webhook-cache-authorized-ttl and -unauthorized-ttl).
const (
	DefaultTokenTTL        = 10 * time.Second
	DefaultAuthorizedTTL   = 10 * time.Second
	DefaultUnauthorizedTTL = 10 * time.Second
)

// maxEntries bounds each cache; when it is full, expired entries go, and
// if none has expired it starts over.
const maxEntries = 8192

// ttlCache keeps values until they expire on a clock.
type ttlCache[K comparable, V any] struct {
	clock clock.Clock

	mu      sync.Mutex
	entries map[K]entry[V]
}

type entry[V any] struct {
	v       V
	expires time.Time
}

func newTTLCache[K comparable, V any](clk clock.Clock) *ttlCache[K, V] {
	return &ttlCache[K, V]{clock: clk, entries: map[K]entry[V]{}}
}

func (c *ttlCache[K, V]) get(k K) (V, bool) {
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.v, true
}

func (c *ttlCache[K, V]) put(k K, v V, ttl time.Duration) {
	now := c.clock.Now()
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
	c.entries[k] = entry[V]{v: v, expires: now.Add(ttl)}
}

// CachedAuthorizer keeps another Authorizer's decisions: an allow for
// allowedTTL, a refusal for deniedTTL. Errors are not kept.
type CachedAuthorizer struct {
	next                  Authorizer
	allowedTTL, deniedTTL time.Duration
	cache                 *ttlCache[string, Decision]
}

var _ Authorizer = (*CachedAuthorizer)(nil)

// NewCachedAuthorizer keeps next's decisions on clk.
func NewCachedAuthorizer(next Authorizer, clk clock.Clock, allowedTTL, deniedTTL time.Duration) *CachedAuthorizer {
	return &CachedAuthorizer{next: next, allowedTTL: allowedTTL, deniedTTL: deniedTTL, cache: newTTLCache[string, Decision](clk)}
}

// attributesKey is everything a decision may depend on, the user's uid and
// extra included (two tokens of one account bound to different Pods are
// different users to an authorizer that reads them).
func attributesKey(a Attributes) string {
	extra := make([]string, 0, len(a.User.Extra))
	for k, v := range a.User.Extra {
		extra = append(extra, k+"="+strings.Join(v, ","))
	}
	slices.Sort(extra)
	return strings.Join([]string{a.User.Name, a.User.UID, strings.Join(a.User.Groups, ","), strings.Join(extra, ";"),
		a.Verb, a.Group, a.Resource, a.Subresource, a.Name, a.Namespace, a.FieldSelector, a.LabelSelector, a.Path}, "\x00")
}

// Authorize answers from the cache while the decision is fresh.
func (c *CachedAuthorizer) Authorize(ctx context.Context, a Attributes) (Decision, error) {
	k := attributesKey(a)
	if d, ok := c.cache.get(k); ok {
		return d, nil
	}
	d, err := c.next.Authorize(ctx, a)
	if err != nil {
		return Decision{}, err
	}
	ttl := c.deniedTTL
	if d.Allowed {
		ttl = c.allowedTTL
	}
	c.cache.put(k, d, ttl)
	return d, nil
}

// CachedTokenAuthenticator keeps another TokenAuthenticator's answers,
// valid or not, for ttl, keyed by the token's hash. Errors are not kept.
type CachedTokenAuthenticator struct {
	next  TokenAuthenticator
	ttl   time.Duration
	cache *ttlCache[[32]byte, tokenAnswer]
}

type tokenAnswer struct {
	user User
	ok   bool
}

var _ TokenAuthenticator = (*CachedTokenAuthenticator)(nil)

// NewCachedTokenAuthenticator keeps next's answers on clk.
func NewCachedTokenAuthenticator(next TokenAuthenticator, clk clock.Clock, ttl time.Duration) *CachedTokenAuthenticator {
	return &CachedTokenAuthenticator{next: next, ttl: ttl, cache: newTTLCache[[32]byte, tokenAnswer](clk)}
}

// AuthenticateToken answers from the cache while the answer is fresh.
func (c *CachedTokenAuthenticator) AuthenticateToken(ctx context.Context, token string) (User, bool, error) {
	k := sha256.Sum256([]byte(token))
	if a, ok := c.cache.get(k); ok {
		return a.user, a.ok, nil
	}
	u, ok, err := c.next.AuthenticateToken(ctx, token)
	if err != nil {
		return User{}, false, err
	}
	c.cache.put(k, tokenAnswer{user: u, ok: ok}, c.ttl)
	return u, ok, nil
}
