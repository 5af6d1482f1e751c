package authn

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"sync"
	"time"

	"podline.dev/services/apiserver/internal/request"
)

// X509 authenticates TLS client certificates signed by the client CA: the
// subject's CommonName is the user and its Organizations the groups.
type X509 struct {
	roots *x509.CertPool
	now   func() time.Time

	mu    sync.Mutex
	cache map[[32]byte]*request.User // verified leaves, until they expire
}

// maxCachedCerts bounds the verification cache; beyond it the cache starts over.
const maxCachedCerts = 4096

// NewX509 verifies against roots (the --client-ca-file bundle).
func NewX509(roots *x509.CertPool) *X509 {
	return &X509{roots: roots, now: time.Now, cache: map[[32]byte]*request.User{}}
}

var _ Authenticator = (*X509)(nil)

// Authenticate verifies the chain for client authentication.
func (a *X509) Authenticate(_ context.Context, c Credentials) (*request.User, bool, error) {
	if len(c.PeerCertificates) == 0 {
		return nil, false, nil
	}
	leaf := c.PeerCertificates[0]
	now := a.now()
	if now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
		return nil, false, fmt.Errorf("%w: %s: outside its validity period", ErrInvalidCertificate, describe(leaf))
	}
	sum := sha256.Sum256(leaf.Raw)
	a.mu.Lock()
	u, hit := a.cache[sum]
	a.mu.Unlock()
	if hit {
		return u, true, nil
	}
	inter := x509.NewCertPool()
	for _, c := range c.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{
		Roots: a.roots, Intermediates: inter, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return nil, false, fmt.Errorf("%w: %s: %v", ErrInvalidCertificate, describe(leaf), err)
	}
	if leaf.Subject.CommonName == "" {
		return nil, false, fmt.Errorf("%w: %s: no common name", ErrInvalidCertificate, describe(leaf))
	}
	u = &request.User{Name: leaf.Subject.CommonName, Groups: append([]string{}, leaf.Subject.Organization...)}
	a.mu.Lock()
	if len(a.cache) >= maxCachedCerts {
		a.cache = map[[32]byte]*request.User{}
	}
	a.cache[sum] = u
	a.mu.Unlock()
	return u, true, nil
}
