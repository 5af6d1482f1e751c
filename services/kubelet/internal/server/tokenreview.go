package server

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"sync"
	"time"

	"podline.dev/pkg/clock"
)

// TokenReviewPath is where the apiserver answers TokenReviews.
const TokenReviewPath = "/apis/authentication.k8s.io/v1/tokenreviews"

// DefaultTokenCacheTTL is how long Kubernetes' kubelet remembers a token
// review's answer, either way (--authentication-token-webhook-cache-ttl).
const DefaultTokenCacheTTL = 2 * time.Minute

// TokenAuthenticator names the user of a bearer token; ok=false with no
// error means the token is not valid.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (u User, ok bool, err error)
}

// TokenReviews is the kubelet's webhook token authentication
// (--authentication-token-webhook): each token is a TokenReview the
// apiserver answers with its own authenticators, sent with the kubelet's
// credentials, for the apiserver's audiences.
type TokenReviews struct{ reviews reviewClient }

var _ TokenAuthenticator = (*TokenReviews)(nil)

// NewTokenReviews asks the apiserver at server (https://host:port) over
// TLS with cfg (the kubelet's client certificate and the cluster CA).
func NewTokenReviews(server string, cfg *tls.Config) *TokenReviews {
	return &TokenReviews{newReviewClient(server, TokenReviewPath, "tokenreview", cfg)}
}

type tokenReview struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Token string `json:"token"`
	} `json:"spec"`
	Status struct {
		Authenticated bool `json:"authenticated"`
		User          struct {
			Username string   `json:"username"`
			Groups   []string `json:"groups"`
		} `json:"user"`
		Error string `json:"error"`
	} `json:"status"`
}

// AuthenticateToken posts a review of token and returns the apiserver's
// answer.
func (r *TokenReviews) AuthenticateToken(ctx context.Context, token string) (User, bool, error) {
	review := tokenReview{APIVersion: "authentication.k8s.io/v1", Kind: "TokenReview"}
	review.Spec.Token = token
	var answer tokenReview
	if err := r.reviews.post(ctx, review, &answer); err != nil {
		return User{}, false, err
	}
	st := answer.Status
	if !st.Authenticated || st.User.Username == "" {
		return User{}, false, nil
	}
	return User{Name: st.User.Username, Groups: st.User.Groups}, true, nil
}

// CachedTokenAuthenticator remembers next's answers, valid or not, for ttl
// (keyed by the token's hash); errors are not remembered.
type CachedTokenAuthenticator struct {
	next  TokenAuthenticator
	clock clock.Clock
	ttl   time.Duration

	mu      sync.Mutex
	entries map[[32]byte]tokenAnswer
}

type tokenAnswer struct {
	user    User
	ok      bool
	expires time.Time
}

var _ TokenAuthenticator = (*CachedTokenAuthenticator)(nil)

// NewCachedTokenAuthenticator caches next's answers on clk.
func NewCachedTokenAuthenticator(next TokenAuthenticator, clk clock.Clock, ttl time.Duration) *CachedTokenAuthenticator {
	return &CachedTokenAuthenticator{next: next, clock: clk, ttl: ttl, entries: map[[32]byte]tokenAnswer{}}
}

// AuthenticateToken answers from the cache while the answer is fresh.
func (c *CachedTokenAuthenticator) AuthenticateToken(ctx context.Context, token string) (User, bool, error) {
	key := sha256.Sum256([]byte(token))
	now := c.clock.Now()
	c.mu.Lock()
	a, hit := c.entries[key]
	c.mu.Unlock()
	if hit && now.Before(a.expires) {
		return a.user, a.ok, nil
	}
	u, ok, err := c.next.AuthenticateToken(ctx, token)
	if err != nil {
		return User{}, false, err
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
			c.entries = map[[32]byte]tokenAnswer{}
		}
	}
	c.entries[key] = tokenAnswer{user: u, ok: ok, expires: now.Add(c.ttl)}
	return u, ok, nil
}
