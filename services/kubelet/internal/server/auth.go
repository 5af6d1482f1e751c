package server

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
)

// User names and groups the kubelet's authenticators give requests, as
// Kubernetes' do.
const (
	AnonymousUser       = "system:anonymous"
	UnauthenticatedUser = "system:unauthenticated"
	AuthenticatedGroup  = "system:authenticated"
)

// User is who a request is.
type User struct {
	Name   string
	Groups []string
}

// Attributes are what a request to the kubelet's API is authorized as: a
// verb on a subresource of the kubelet's Node, as Kubernetes' kubelet maps
// its paths (/containerLogs and /exec are nodes/proxy).
type Attributes struct {
	User        User
	Verb        string
	Resource    string
	Subresource string
	Name        string
}

// Authorizer decides whether a request may be served; reason says why not.
// The kubelet's Webhook mode asks the apiserver (SubjectAccessReviews).
type Authorizer interface {
	Authorize(ctx context.Context, a Attributes) (allowed bool, reason string, err error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, a Attributes) (bool, string, error)

// Authorize calls f.
func (f AuthorizerFunc) Authorize(ctx context.Context, a Attributes) (bool, string, error) {
	return f(ctx, a)
}

// AlwaysAllow serves every authenticated request (--authorization-mode=AlwaysAllow).
var AlwaysAllow Authorizer = AuthorizerFunc(func(context.Context, Attributes) (bool, string, error) {
	return true, "", nil
})

// withAuth authenticates and authorizes every request before next serves
// it: 401 without credentials the kubelet accepts, 403 with Kubernetes'
// kubelet message when the authorizer refuses.
func (s *Server) withAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := s.authenticate(r)
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		a := s.attributes(u, r)
		allowed, reason, err := s.cfg.Authorizer.Authorize(r.Context(), a)
		if err != nil {
			s.log.Error("kubelet authorization", "user", u.Name, "err", err)
			http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=%s, subresource=%s)", u.Name, a.Verb, a.Resource, a.Subresource), http.StatusInternalServerError)
			return
		}
		if !allowed {
			s.log.Debug("kubelet request forbidden", "user", u.Name, "verb", a.Verb, "path", r.URL.Path, "reason", reason)
			http.Error(w, forbidden(a), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// forbidden is the kubelet's 403 text.
func forbidden(a Attributes) string {
	return fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=%s, subresource(s)=[%s])", a.User.Name, a.Verb, a.Resource, a.Subresource)
}

// authenticate finds the request's user: the subject of a client
// certificate signed by the client CA (CN the user, O the groups), else
// the user of an "Authorization: Bearer" token by Config.Tokens, else
// system:anonymous when anonymous requests are allowed.
func (s *Server) authenticate(r *http.Request) (User, bool) {
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		if s.cfg.ClientCA == nil {
			return User{}, false
		}
		leaf := r.TLS.PeerCertificates[0]
		inter := x509.NewCertPool()
		for _, c := range r.TLS.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := leaf.Verify(x509.VerifyOptions{Roots: s.cfg.ClientCA, Intermediates: inter,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		if err != nil || leaf.Subject.CommonName == "" {
			return User{}, false
		}
		groups := append(append([]string{}, leaf.Subject.Organization...), AuthenticatedGroup)
		return User{Name: leaf.Subject.CommonName, Groups: groups}, true
	}
	if token := bearerToken(r.Header.Get("Authorization")); token != "" {
		if s.cfg.Tokens == nil {
			return User{}, false
		}
		u, ok, err := s.cfg.Tokens.AuthenticateToken(r.Context(), token)
		if err != nil {
			s.log.Error("kubelet token authentication", "err", err)
		}
		return u, ok && err == nil
	}
	if s.cfg.Anonymous {
		return User{Name: AnonymousUser, Groups: []string{UnauthenticatedUser}}, true
	}
	return User{}, false
}

// attributes maps a request as Kubernetes' kubelet does: the verb from the
// method, on nodes/proxy of this node. Exec is create whatever its method
// (a WebSocket upgrade is a GET), as the apiserver authorizes pods/exec.
func (s *Server) attributes(u User, r *http.Request) Attributes {
	verb := "get"
	switch r.Method {
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
	}
	if strings.HasPrefix(r.URL.Path, "/exec/") {
		verb = "create"
	}
	return Attributes{User: u, Verb: verb, Resource: "nodes", Subresource: "proxy", Name: s.cfg.NodeName}
}

// bearerToken is the token of an "Authorization: Bearer <token>" value
// ("" for any other scheme).
func bearerToken(authorization string) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(authorization), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
