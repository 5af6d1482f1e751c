package server

import (
	"net"
	"net/http"
	"strings"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/k8sjson"
	"podline.dev/services/apiserver/internal/audit"
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
// one vouches for it, and passes the user and the request's info on in
// its context; the in-process gRPC connection forwards them to the server,
// where resource requests are authorized and audited. Paths outside the
// gateway (discovery, version, health) are authorized and audited here as
// non-resource requests.
func (s *Server) withAuthentication(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.auth == nil {
			next.ServeHTTP(w, r)
			return
		}
		info := request.Info{URI: r.URL.RequestURI(), SourceIP: r.RemoteAddr, UserAgent: r.UserAgent()}
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			info.SourceIP = host
		}
		ctx := request.WithInfo(r.Context(), info)
		resource := authz.IsResourcePath(r.URL.Path)
		a := authz.Attributes{Verb: strings.ToLower(r.Method), Path: r.URL.Path}
		if s.auth.authorizer != nil {
			creds := authn.Credentials{BearerToken: authn.BearerToken(r.Header.Get("Authorization"))}
			if r.TLS != nil {
				creds.PeerCertificates = r.TLS.PeerCertificates
			}
			var err error
			if creds.Empty() && isPublic(r.URL.Path) {
				a.User = authn.AnonymousUser()
			} else if a.User, err = authn.Traced(ctx, s.auth.authn, creds); err != nil {
				se := apierrors.NewUnauthorized("")
				s.startAudit(ctx, a, nil).Complete(audit.ResponseStatus{Code: http.StatusUnauthorized, Status: "Failure", Reason: apierrors.ReasonUnauthorized}, nil)
				writeStatus(w, se)
				return
			}
			impersonated, err := s.impersonate(ctx, r, a.User)
			if err != nil {
				se := apierrors.FromError(err)
				s.startAudit(ctx, a, nil).Complete(audit.ResponseStatus{Code: int(se.Status().GetCode()), Status: "Failure", Reason: se.Status().GetReason(), Message: se.Status().GetMessage()}, nil)
				writeStatus(w, se)
				return
			}
			if impersonated != a.User {
				info.Impersonator = a.User
				ctx = request.WithInfo(ctx, info)
				a.User = impersonated
			}
			ctx = request.WithUser(ctx, a.User)
		}
		if resource {
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		rec := s.startAudit(ctx, a, nil)
		if err := s.authorize(ctx, a); err != nil {
			se := apierrors.FromError(err)
			rec.Complete(audit.ResponseStatus{Code: int(se.Status().GetCode()), Status: "Failure", Reason: se.Status().GetReason(), Message: se.Status().GetMessage()}, nil)
			writeStatus(w, se)
			return
		}
		cw := &codeWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(cw, r.WithContext(ctx))
		rec.Complete(audit.ResponseStatus{Code: cw.code}, nil)
	})
}

// codeWriter remembers the status code of a non-resource answer.
type codeWriter struct {
	http.ResponseWriter
	code int
}

func (w *codeWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *codeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *codeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

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
