package main

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// An https:// Jaeger is asked only with the CA that verifies it. Without
// that CA file (the default path, outside the repository) the birth comes
// from the Pod's Events, and the output says why, naming the flag; a plain
// http:// Jaeger needs no CA.
func TestAnHTTPSJaegerNeedsItsCAFile(t *testing.T) {
	c := startCluster(t)
	c.send(t, context.Background(), http.MethodPost, "/api/v1/namespaces/default/pods",
		podJSON("traced", "", map[string]string{"podline.dev/traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}), nil)
	missing := filepath.Join(t.TempDir(), "ca.crt")
	out, errOut, code := c.birth(t, "pod/traced", "--jaeger", "https://127.0.0.1:16686", "--jaeger-ca-file", missing)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"fallback: jaeger query API unreachable: no CA to verify https://127.0.0.1:16686 (--jaeger-ca-file)", missing, "timeline from the pod's Events"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := jaegerClient("http://127.0.0.1:16686", missing); err != nil {
		t.Errorf("http:// Jaeger: %v", err)
	}
}
