package proxier

import (
	"encoding/json"
	"net/http"
	"time"
)

// HealthzHandler answers /healthz and /livez as kube-proxy does: 200 with
// the last update's time while the rules are current, 503 before the
// first sync or when a change has waited too long.
func (p *Proxier) HealthzHandler() http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		ok, last := p.Healthy()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if !ok {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		body := map[string]string{"currentTime": p.clock.Now().UTC().Format(time.RFC3339Nano)}
		if !last.IsZero() {
			body["lastUpdated"] = last.UTC().Format(time.RFC3339Nano)
		}
		_ = json.NewEncoder(w).Encode(body)
	})
	mux := http.NewServeMux()
	mux.Handle("/healthz", h)
	mux.Handle("/livez", h)
	return mux
}
