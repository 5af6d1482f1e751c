package token

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"podline.dev/pkg/clock"
	corev1 "podline.dev/proto/core/v1"
)

// Request is what a Pod's volume asks for: a token of the Pod's account,
// bound to the Pod.
type Request struct {
	Namespace, ServiceAccount string
	// PodName and PodUID are the Pod the token is bound to.
	PodName, PodUID string
	// Audiences are the token's; none means the apiserver's.
	Audiences []string
	// ExpirationSeconds is the lifetime asked for.
	ExpirationSeconds int64
}

// Token is an issued token.
type Token struct {
	Value string
	// Expiration is when it stops being valid.
	Expiration time.Time
	// ExpirationSeconds is the lifetime granted (the apiserver may shorten
	// what was asked).
	ExpirationSeconds int64
}

// Requester asks for tokens (the TokenRequest API).
type Requester interface {
	RequestToken(ctx context.Context, r Request) (Token, error)
}

// Refresh thresholds, as Kubernetes' kubelet has them: a token is renewed
// once 80% of its life has passed, and at the latest when it is a day old.
const (
	refreshFraction = 0.8
	maxAge          = 24 * time.Hour
)

// Manager keeps the tokens of the node's Pods.
type Manager struct {
	requester Requester
	clock     clock.Clock
	log       *slog.Logger

	mu     sync.Mutex
	tokens map[string]Token
}

// NewManager asks r for tokens, on clk.
func NewManager(r Requester, clk clock.Clock, log *slog.Logger) *Manager {
	return &Manager{requester: r, clock: clk, log: log, tokens: map[string]Token{}}
}

func key(r Request) string {
	return strings.Join([]string{r.PodUID, r.Namespace, r.ServiceAccount, strings.Join(r.Audiences, ","), fmt.Sprint(r.ExpirationSeconds)}, "/")
}

// Get returns the token for r: the kept one while it is fresh, else a new
// one. If a new one cannot be had, the kept one is returned as long as it
// has not expired.
func (m *Manager) Get(ctx context.Context, r Request) (Token, error) {
	k := key(r)
	now := m.clock.Now()
	m.mu.Lock()
	cur, ok := m.tokens[k]
	m.mu.Unlock()
	if ok && !needsRefresh(cur, now) {
		return cur, nil
	}
	tok, err := m.requester.RequestToken(ctx, r)
	if err != nil {
		if ok && now.Before(cur.Expiration) {
			m.log.Warn("token refresh failed; the current token is still valid", "pod", r.Namespace+"/"+r.PodName,
				"serviceAccount", r.ServiceAccount, "expires", cur.Expiration, "err", err)
			return cur, nil
		}
		return Token{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, t := range m.tokens {
		if !now.Before(t.Expiration) {
			delete(m.tokens, k)
		}
	}
	m.tokens[k] = tok
	return tok, nil
}

// needsRefresh reports whether tok has lived 80% of its life, or a day.
func needsRefresh(tok Token, now time.Time) bool {
	ttl := time.Duration(tok.ExpirationSeconds) * time.Second
	issued := tok.Expiration.Add(-ttl)
	return ttl <= 0 ||
		!now.Before(issued.Add(time.Duration(float64(ttl)*refreshFraction))) ||
		!now.Before(issued.Add(maxAge))
}

// ForgetPod drops the tokens bound to the Pod with uid.
func (m *Manager) ForgetPod(uid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.tokens {
		if strings.HasPrefix(k, uid+"/") {
			delete(m.tokens, k)
		}
	}
}

// PodToken is the token of a serviceAccountToken projection of pod: of
// the Pod's account (default when it names none), bound to the Pod, for
// audience ("" for the apiserver's), asked to live expirationSeconds.
func (m *Manager) PodToken(ctx context.Context, pod *corev1.Pod, audience string, expirationSeconds int64) ([]byte, error) {
	r := Request{
		Namespace: pod.GetMetadata().GetNamespace(), ServiceAccount: pod.GetSpec().GetServiceAccountName(),
		PodName: pod.GetMetadata().GetName(), PodUID: pod.GetMetadata().GetUid(), ExpirationSeconds: expirationSeconds,
	}
	if r.ServiceAccount == "" {
		r.ServiceAccount = "default"
	}
	if audience != "" {
		r.Audiences = []string{audience}
	}
	tok, err := m.Get(ctx, r)
	if err != nil {
		return nil, err
	}
	return []byte(tok.Value), nil
}
