package secureserving

import (
	"crypto/x509"
	"net/http"
	"slices"
	"strings"
)

// Authenticator finds a request's user, as Kubernetes' delegated
// authentication does: a client certificate signed by ClientCA, else a
// bearer token by Tokens, else system:anonymous when Anonymous is set.
type Authenticator struct {
	// ClientCA verifies client certificates (--client-ca-file): the CN is
	// the user, the Os its groups. Nil accepts no certificate.
	ClientCA *x509.CertPool
	// Tokens authenticates bearer tokens (TokenReviews to the apiserver);
	// nil refuses them.
	Tokens TokenAuthenticator
	// Anonymous serves requests without credentials as system:anonymous in
	// system:unauthenticated, still subject to authorization; otherwise
	// they are refused.
	Anonymous bool
}

// Authenticate names r's user; ok is false when r presents credentials
// that do not verify, or none and anonymous requests are refused. err
// says why a token could not be reviewed (ok is false then too).
func (a Authenticator) Authenticate(r *http.Request) (u User, ok bool, err error) {
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		return a.certificateUser(r.TLS.PeerCertificates)
	}
	if token := BearerToken(r.Header.Get("Authorization")); token != "" {
		if a.Tokens == nil {
			return User{}, false, nil
		}
		u, ok, err := a.Tokens.AuthenticateToken(r.Context(), token)
		if err != nil || !ok {
			return User{}, false, err
		}
		if !slices.Contains(u.Groups, AuthenticatedGroup) {
			u.Groups = append(slices.Clip(u.Groups), AuthenticatedGroup)
		}
		return u, true, nil
	}
	if a.Anonymous {
		return User{Name: AnonymousUser, Groups: []string{UnauthenticatedUser}}, true, nil
	}
	return User{}, false, nil
}

// certificateUser verifies a client's chain against the client CA, for
// client use, whatever the TLS handshake checked.
func (a Authenticator) certificateUser(chain []*x509.Certificate) (User, bool, error) {
	if a.ClientCA == nil {
		return User{}, false, nil
	}
	leaf := chain[0]
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: a.ClientCA, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil || leaf.Subject.CommonName == "" {
		return User{}, false, nil
	}
	groups := append(slices.Clone(leaf.Subject.Organization), AuthenticatedGroup)
	return User{Name: leaf.Subject.CommonName, Groups: groups}, true, nil
}

// BearerToken is the token of an "Authorization: Bearer <token>" value
// ("" for any other scheme).
func BearerToken(authorization string) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(authorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
