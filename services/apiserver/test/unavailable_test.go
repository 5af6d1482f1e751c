package test

import (
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/services/apiserver/apiservertest"
)

// Without etcd, writes fail fast with 503 and readyz names etcd.
func TestEtcdDownWritesFailFastAndReadyzSaysSo(t *testing.T) {
	ctx := ctxFor(t)
	s := apiservertest.Start(t, apiservertest.WithEtcdTimeout(2*time.Second))
	c := &restClient{t: t, base: s.URL, http: s.HTTPClient()}
	s.Etcd.Stop()

	start := time.Now()
	_, err := startServerClient(s).Create(ctx, pod("web", nil))
	if !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("create without etcd: %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("create took %v to fail", took)
	}
	code, body, _ := c.do("GET", "/readyz", "", nil)
	if code != 500 || body["raw"] == nil || !contains(body["raw"].(string), "[-]etcd failed") {
		t.Fatalf("readyz: %d %v", code, body)
	}
	if code, _, _ := c.do("GET", "/livez", "", nil); code != 200 {
		t.Fatalf("livez: %d", code)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
