package rest

import (
	"mime"
	"net/http"
	"strings"

	"podline.dev/services/apiserver/internal/openapi"
)

// registerOpenAPI mounts /openapi/v3 (the index), /openapi/v3/<group-version
// path> and /openapi/v2. Each answers JSON; an Accept header that allows
// only other forms (kubectl asks for v2 in protobuf alone) is 406, after
// which clients fall back to what they can use.
func registerOpenAPI(mux *http.ServeMux) error {
	docs, err := openapi.Build(Version)
	if err != nil {
		return err
	}
	mux.HandleFunc("GET /openapi/v3", func(w http.ResponseWriter, r *http.Request) {
		serveDocument(w, r, docs.V3Index(), "")
	})
	mux.HandleFunc("GET /openapi/v3/{gv...}", func(w http.ResponseWriter, r *http.Request) {
		doc, hash, ok := docs.V3(r.PathValue("gv"))
		if !ok {
			writeStatus(w, notFound())
			return
		}
		serveDocument(w, r, doc, hash)
	})
	mux.HandleFunc("GET /openapi/v2", func(w http.ResponseWriter, r *http.Request) {
		serveDocument(w, r, docs.V2(), "")
	})
	return nil
}

// serveDocument writes a document. Asked for by its current hash, it may be
// cached for good, as kube-apiserver lets clients cache it.
func serveDocument(w http.ResponseWriter, r *http.Request, doc []byte, hash string) {
	if !acceptsJSON(r.Header.Values("Accept")) {
		writeStatus(w, notAcceptable())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if hash != "" {
		w.Header().Set("Etag", `"`+hash+`"`)
		if r.URL.Query().Get("hash") == hash {
			w.Header().Set("Cache-Control", "public, immutable, max-age=31536000")
		} else {
			w.Header().Set("Cache-Control", "no-cache, private")
		}
	}
	_, _ = w.Write(doc)
}

// acceptsJSON tells whether an Accept header lets a document be JSON.
func acceptsJSON(values []string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for _, rng := range strings.Split(v, ",") {
			if strings.TrimSpace(rng) == "" {
				return true
			}
			mt, _, err := mime.ParseMediaType(rng)
			if err != nil {
				continue
			}
			switch mt {
			case "*/*", "application/*", "application/json":
				return true
			}
		}
	}
	return false
}
