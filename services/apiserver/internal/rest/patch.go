package rest

import (
	"mime"
	"net/http"
	"strings"

	"podline.dev/pkg/apierrors"
	"podline.dev/services/apiserver/internal/registry"
)

// withPatch prepares a PATCH for the gateway: its Content-Type names the
// patch type, which the Patch methods take as the patchType parameter; a
// type the server does not know is 415, as in Kubernetes. The body reaches
// the method as raw bytes (see decoder.Decode).
func withPatch(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPatch {
			next.ServeHTTP(w, r)
			return
		}
		ct := r.Header.Get("Content-Type")
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !registry.IsPatchType(mt) {
			writeStatus(w, unsupportedPatchType(ct))
			return
		}
		r = r.Clone(r.Context())
		q := r.URL.Query()
		q.Set("patchType", mt)
		r.URL.RawQuery = q.Encode()
		next.ServeHTTP(w, r)
	})
}

func unsupportedPatchType(ct string) *apierrors.StatusError {
	se := apierrors.NewUnsupportedMediaType(ct)
	se.ErrStatus.Message = "the body of the request was in an unknown format - accepted media types include: " +
		strings.Join(registry.PatchTypes, ", ")
	return se
}
