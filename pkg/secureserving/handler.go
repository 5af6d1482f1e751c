package secureserving

import (
	"log/slog"
	"net/http"
	"strings"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/k8sjson"
)

// DefaultAlwaysAllowPaths are served to anyone, without authentication:
// Kubernetes' --authorization-always-allow-paths default.
var DefaultAlwaysAllowPaths = []string{"/healthz", "/readyz", "/livez"}

// Config is who a secure port serves.
type Config struct {
	Authenticator Authenticator
	// Authorizer decides every authenticated request; nil refuses all but
	// AlwaysAllowPaths.
	Authorizer Authorizer
	// AlwaysAllowPaths skip authentication and authorization: a path
	// equal to one, or under one that ends in "/*" ("/debug/*").
	AlwaysAllowPaths []string
	// Log records refusals and failed reviews (slog.Default when nil).
	Log *slog.Logger
}

// Handler serves next to the requests c lets through: anyone on an
// always-allowed path; else 401 to a request without valid credentials,
// 403 when the authorizer refuses (Kubernetes' message) and 503 when it
// could not decide, each as a Kubernetes Status.
func (c Config) Handler(next http.Handler) http.Handler {
	log := c.Log
	if log == nil {
		log = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if alwaysAllowed(c.AlwaysAllowPaths, r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		u, ok, err := c.Authenticator.Authenticate(r)
		if err != nil {
			log.Warn("authentication failed", "path", r.URL.Path, "err", err)
		}
		if !ok {
			writeStatus(w, apierrors.NewUnauthorized(""))
			return
		}
		a := NonResource(u, r)
		if c.Authorizer == nil {
			writeStatus(w, Forbidden(a, ""))
			return
		}
		if err := Check(r.Context(), c.Authorizer, a); err != nil {
			log.Debug("request refused", "user", u.Name, "verb", a.Verb, "path", a.Path, "err", err)
			writeStatus(w, apierrors.FromError(err))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func alwaysAllowed(paths []string, path string) bool {
	for _, p := range paths {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(path, prefix) {
				return true
			}
		} else if path == p {
			return true
		}
	}
	return false
}

// writeStatus answers a Kubernetes Status as JSON with its code.
func writeStatus(w http.ResponseWriter, se *apierrors.StatusError) {
	st := se.Status()
	body, err := k8sjson.Marshal(st)
	if err != nil {
		http.Error(w, st.GetMessage(), int(st.GetCode()))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(st.GetCode()))
	_, _ = w.Write(body)
}
