package server

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"podline.dev/pkg/secureserving"
)

// Kubernetes' kubelet keeps the apiserver's answers this long: a token
// review either way (--authentication-token-webhook-cache-ttl), an allow
// and a refusal (--authorization-webhook-cache-authorized-ttl,
// -unauthorized-ttl).
const (
	DefaultTokenCacheTTL = 2 * time.Minute
	DefaultAllowedTTL    = 5 * time.Minute
	DefaultDeniedTTL     = 30 * time.Second
)

// withAuth authenticates and authorizes every request before next serves
// it: 401 without credentials the kubelet accepts, 403 with Kubernetes'
// kubelet message when the authorizer refuses.
func (s *Server) withAuth(next http.Handler) http.Handler {
	authn := secureserving.Authenticator{ClientCA: s.cfg.ClientCA, Tokens: s.cfg.Tokens, Anonymous: s.cfg.Anonymous}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok, err := authn.Authenticate(r)
		if err != nil {
			s.log.Error("kubelet token authentication", "err", err)
		}
		if !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		a := s.attributes(u, r)
		d, err := s.cfg.Authorizer.Authorize(r.Context(), a)
		if err != nil {
			s.log.Error("kubelet authorization", "user", u.Name, "err", err)
			http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=%s, subresource=%s)", u.Name, a.Verb, a.Resource, a.Subresource), http.StatusInternalServerError)
			return
		}
		if !d.Allowed {
			s.log.Debug("kubelet request forbidden", "user", u.Name, "verb", a.Verb, "path", r.URL.Path, "reason", d.Reason)
			http.Error(w, forbidden(a), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// forbidden is the kubelet's 403 text.
func forbidden(a secureserving.Attributes) string {
	return fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=%s, subresource(s)=[%s])", a.User.Name, a.Verb, a.Resource, a.Subresource)
}

// attributes maps a request as Kubernetes' kubelet does: the verb from the
// method, on nodes/proxy of this node. Exec and port forwarding are create
// whatever their method (a WebSocket upgrade is a GET), as the apiserver
// authorizes pods/exec and pods/portforward.
func (s *Server) attributes(u secureserving.User, r *http.Request) secureserving.Attributes {
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
	if strings.HasPrefix(r.URL.Path, "/exec/") || strings.HasPrefix(r.URL.Path, "/portForward/") {
		verb = "create"
	}
	return secureserving.Attributes{User: u, Verb: verb, Resource: "nodes", Subresource: "proxy", Name: s.cfg.NodeName}
}
