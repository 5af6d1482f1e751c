package rest

import (
	"mime"
	"net/http"
	"strings"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/field"
)

// withNegotiation checks what a resource request says it sends and
// accepts, as kube-apiserver does before its handler runs:
//
//   - a body in Kubernetes' protobuf encoding (application/vnd.kubernetes.protobuf,
//     what client-go's typed clients and kubectl send unless configured
//     otherwise) is turned into JSON first (protobuf.go);
//   - a body in any other format than JSON is 415 Unsupported Media Type,
//     not a JSON syntax error;
//   - an Accept header that no JSON answer satisfies (only protobuf, YAML,
//     or a transformation other than a meta.k8s.io/v1 Table) is 406 Not
//     Acceptable; client-go lists application/json after protobuf, so it
//     gets JSON and decodes it by the response's Content-Type;
//   - a read whose first acceptable media range asks for a Table (kubectl
//     get) is answered with one (table.go);
//   - sendInitialEvents (a watch-list, that client-go's reflectors try first)
//     is refused as a kube-apiserver without the WatchList feature refuses
//     it: 422, after which the reflector lists and watches instead.
func withNegotiation(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if se := transcodeProtobuf(w, r); se != nil {
			writeStatus(w, se)
			return
		}
		if se := checkContentType(r); se != nil {
			writeStatus(w, se)
			return
		}
		table, se := checkAccept(r.Header.Values("Accept"))
		if se != nil {
			writeStatus(w, se)
			return
		}
		if table && r.Method == http.MethodGet {
			if r, se = withTable(r); se != nil {
				writeStatus(w, se)
				return
			}
		}
		if se := checkWatchList(r); se != nil {
			writeStatus(w, se)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkContentType refuses a request body that is not JSON. A missing
// Content-Type is taken as JSON, as kube-apiserver takes it. PATCH has its
// own content types (withPatch).
func checkContentType(r *http.Request) *apierrors.StatusError {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodDelete:
	default:
		return nil
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && mt == "application/json" {
		return nil
	}
	return apierrors.NewUnsupportedMediaType(ct)
}

// checkAccept picks the answer the first acceptable media range of the
// Accept header asks for: plain JSON, or a Table (table is true). It
// refuses a header none of whose ranges either satisfies.
func checkAccept(values []string) (table bool, se *apierrors.StatusError) {
	if len(values) == 0 {
		return false, nil
	}
	for _, v := range values {
		for _, rng := range strings.Split(v, ",") {
			rng = strings.TrimSpace(rng)
			if rng == "" {
				return false, nil
			}
			mt, params, err := mime.ParseMediaType(rng)
			if err != nil {
				continue
			}
			switch mt {
			case "*/*", "application/*", "application/json":
			default:
				continue
			}
			as, transform := params["as"]
			switch {
			case !transform:
				return false, nil
			case as == "Table" && params["g"] == "meta.k8s.io" && params["v"] == "v1":
				return true, nil
			}
		}
	}
	return false, notAcceptable()
}

// checkWatchList refuses sendInitialEvents with kube-apiserver's
// ListOptions validation messages for a server without WatchList.
func checkWatchList(r *http.Request) *apierrors.StatusError {
	q := r.URL.Query()
	if r.Method != http.MethodGet || !q.Has("sendInitialEvents") {
		return nil
	}
	var errs field.ErrorList
	if !isWatch(r) {
		errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
	} else {
		if q.Get("resourceVersionMatch") != "NotOlderThan" {
			errs = append(errs, field.Forbidden(field.NewPath("resourceVersionMatch"), "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
		}
		errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"))
	}
	return apierrors.NewInvalid(apierrors.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", errs)
}

// isWatch tells a watch (?watch=true, or the legacy /watch/ path) from a list.
func isWatch(r *http.Request) bool {
	if isTrue(r.URL.Query().Get("watch")) {
		return true
	}
	p, ok := watchPath(r.URL.Path)
	return ok && p == r.URL.Path
}
