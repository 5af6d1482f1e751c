package server

import (
	"net/http"
	"strings"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/k8sjson"
	"podline.dev/services/apiserver/internal/authn"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

// publicPaths answer anonymous requests, as Kubernetes' public-info-viewer
// role allows for system:unauthenticated.
var publicPaths = []string{"/healthz", "/livez", "/readyz"}

func isPublic(path string) bool {
	for _, p := range publicPaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// withAuthentication is the REST chain's first stage: it authenticates the
// request (client certificate, bearer token), refuses it with 401 when no
// one vouches for it, and passes the user on in the request's context;
// the in-process gRPC connection forwards it to the server, where
// resource requests are authorized. Paths outside the gateway (discovery,
// version) are authorized here as non-resource requests.
func (s *Server) withAuthentication(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.auth == nil {
			next.ServeHTTP(w, r)
			return
		}
		creds := authn.Credentials{BearerToken: authn.BearerToken(r.Header.Get("Authorization"))}
		if r.TLS != nil {
			creds.PeerCertificates = r.TLS.PeerCertificates
		}
		var u *request.User
		if creds.Empty() && isPublic(r.URL.Path) {
			u = authn.AnonymousUser()
		} else {
			var err error
			if u, err = authn.Traced(r.Context(), s.auth.authn, creds); err != nil {
				writeStatus(w, apierrors.NewUnauthorized(""))
				return
			}
		}
		ctx := request.WithUser(r.Context(), u)
		if !authz.IsResourcePath(r.URL.Path) {
			a := authz.Attributes{User: u, Verb: strings.ToLower(r.Method), Path: r.URL.Path}
			if err := authz.Check(ctx, s.auth.authorizer, a); err != nil {
				writeStatus(w, apierrors.FromError(err))
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// writeStatus answers with a Status and its HTTP code.
func writeStatus(w http.ResponseWriter, se *apierrors.StatusError) {
	body, err := k8sjson.Marshal(se.Status())
	if err != nil {
		http.Error(w, se.Error(), int(se.Status().GetCode()))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(se.Status().GetCode()))
	_, _ = w.Write(append(body, '\n'))
}
