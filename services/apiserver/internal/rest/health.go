package rest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Check is one named health check.
type Check struct {
	Name string
	Fn   func(ctx context.Context) error
}

// healthHandler answers like kube-apiserver: "ok", or with ?verbose a line
// per check, and a 500 listing the failed checks when any fails.
func healthHandler(endpoint string, checks []Check) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		var b strings.Builder
		failed := false
		for _, c := range checks {
			if err := c.Fn(ctx); err != nil {
				failed = true
				fmt.Fprintf(&b, "[-]%s failed: reason withheld\n", c.Name)
				continue
			}
			fmt.Fprintf(&b, "[+]%s ok\n", c.Name)
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if failed {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "%s%s check failed\n", b.String(), endpoint)
			return
		}
		if _, verbose := r.URL.Query()["verbose"]; verbose {
			fmt.Fprintf(w, "%s%s check passed\n", b.String(), endpoint)
			return
		}
		fmt.Fprint(w, "ok")
	}
}

func registerHealth(mux *http.ServeMux, live, ready []Check) {
	mux.HandleFunc("GET /healthz", healthHandler("healthz", ready))
	mux.HandleFunc("GET /livez", healthHandler("livez", live))
	mux.HandleFunc("GET /readyz", healthHandler("readyz", ready))
}
