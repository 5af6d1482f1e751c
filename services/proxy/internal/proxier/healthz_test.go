package proxier

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHealthzIsUnavailableUntilTheFirstSyncAndMetricsUseKubeProxysNames(t *testing.T) {
	src := NewMemorySource()
	p := newTestProxier(newRecorder(), src, testNode)
	get := func(h http.Handler, path string) (int, string) {
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, path, nil))
		return rr.Code, rr.Body.String()
	}
	for _, path := range []string{"/healthz", "/livez"} {
		if code, _ := get(p.HealthzHandler(), path); code != http.StatusServiceUnavailable {
			t.Errorf("%s before the first sync: %d, want 503", path, code)
		}
	}
	if err := p.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/healthz", "/livez"} {
		if code, body := get(p.HealthzHandler(), path); code != http.StatusOK || !strings.Contains(body, "lastUpdated") {
			t.Errorf("%s after a sync: %d %s, want 200 with lastUpdated", path, code, body)
		}
	}
	_, metrics := get(p.metrics.Handler(), "/metrics")
	for _, name := range []string{
		"kubeproxy_sync_proxy_rules_duration_seconds_count 1",
		"kubeproxy_sync_full_proxy_rules_duration_seconds_count 1",
		"kubeproxy_sync_proxy_rules_last_timestamp_seconds",
	} {
		if !strings.Contains(metrics, name) {
			t.Errorf("/metrics lacks %q", name)
		}
	}
}
