package rest

import (
	"context"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/k8sjson"
	"podline.dev/services/apiserver/internal/admission"
	"podline.dev/services/apiserver/internal/registry"
)

// MaxRequestBodyBytes caps a request body; etcd's own limit per value is 1.5 MiB.
const MaxRequestBodyBytes = 3 << 19

// withRequestState caps the body, reads fieldValidation and turns the
// decoder's warnings into Warning headers.
func withRequestState(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := &requestState{validation: validationMode(r.URL.Query().Get("fieldValidation"))}
		if r.Body != nil {
			r.Body = &stateBody{ReadCloser: http.MaxBytesReader(w, r.Body, MaxRequestBodyBytes), state: st}
		}
		next.ServeHTTP(&warningWriter{ResponseWriter: w, state: st}, withState(r, st))
	})
}

// validationMode maps the fieldValidation parameter; Kubernetes' server
// default when it is absent is Warn.
func validationMode(v string) k8sjson.FieldValidation {
	switch strings.ToLower(v) {
	case "strict":
		return k8sjson.Strict
	case "ignore":
		return k8sjson.Ignore
	}
	return k8sjson.Warn
}

// warningWriter adds Warning headers before the status line, and lets a
// watch's header be written once even if the gateway writes it again.
type warningWriter struct {
	http.ResponseWriter
	state       *requestState
	wroteHeader bool
}

func (w *warningWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	for _, msg := range w.state.warnings {
		w.Header().Add("Warning", `299 - "`+strings.ReplaceAll(msg, `"`, `\"`)+`"`)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *warningWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *warningWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *warningWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// withWatchRoute sends GET <collection>?watch=1 to the watch route
// <prefix>/watch/<rest>, which the gateway maps to the Watch method.
func withWatchRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && isTrue(r.URL.Query().Get("watch")) {
			if p, ok := watchPath(r.URL.Path); ok {
				r = r.Clone(r.Context())
				r.URL.Path = p
				r.URL.RawPath = ""
			}
		}
		next.ServeHTTP(w, r)
	})
}

func isTrue(v string) bool { return v == "1" || strings.EqualFold(v, "true") }

// watchPath inserts "watch" after the group/version prefix.
func watchPath(p string) (string, bool) {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	n := 0
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		n = 2
	case len(parts) >= 4 && parts[0] == "apis":
		n = 3
	default:
		return "", false
	}
	if parts[n] == "watch" {
		return p, true
	}
	out := append(append(append([]string{}, parts[:n]...), "watch"), parts[n:]...)
	return "/" + strings.Join(out, "/"), true
}

// forwardResponse runs before each response: a stream (resp == nil) gets
// its 200 and headers flushed at once, as Kubernetes' watch does, so a
// client's Watch call returns before the first event; a create answers 201.
func forwardResponse(ctx context.Context, w http.ResponseWriter, resp proto.Message) error {
	if resp == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		return nil
	}
	// Admission's warnings come back as gRPC response metadata, and so
	// does the news that a server-side apply created its object.
	created := false
	if md, ok := runtime.ServerMetadataFromContext(ctx); ok {
		if st := stateOf(ctx); st != nil {
			st.warnings = append(st.warnings, md.HeaderMD.Get(admission.WarningMetadataKey)...)
		}
		created = len(md.HeaderMD.Get(registry.CreatedMetadataKey)) > 0
	}
	if method, ok := runtime.RPCMethod(ctx); ok && (created || strings.HasSuffix(method, "/Create")) {
		w.WriteHeader(http.StatusCreated)
	}
	return nil
}
