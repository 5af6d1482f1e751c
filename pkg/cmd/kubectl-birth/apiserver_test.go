package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"

	"podline.dev/services/apiserver/apiservertest"
)

// cluster is a real apiserver on an embedded etcd, and a kubeconfig for it.
type cluster struct {
	srv        *apiservertest.Server
	kubeconfig string
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	srv := apiservertest.Start(t)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	text := "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: " + srv.URL +
		"\nusers:\n- name: test\n  user: {}\ncontexts:\n- name: test\n  context:\n    cluster: test\n    user: test\ncurrent-context: test\n"
	if err := os.WriteFile(kc, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return &cluster{srv: srv, kubeconfig: kc}
}

// send makes a REST request with body (JSON-encoded) carrying ctx's span
// as its traceparent, as a component's client does, and decodes the answer
// into out when out is not nil.
func (c *cluster) send(t *testing.T, ctx context.Context, method, path string, body, out any) {
	t.Helper()
	var data io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.srv.URL+path, data)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
	resp, err := c.srv.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %s %s", method, path, resp.Status, answer)
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			t.Fatal(err)
		}
	}
}

// birth runs the plugin with args against the cluster; it returns stdout,
// stderr and the exit code.
func (c *cluster) birth(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr strings.Builder
	code := run(context.Background(), append(args, "--kubeconfig", c.kubeconfig, "--width", "120"), &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// podJSON is a minimal Pod; owner, if not "", is its controlling
// ReplicaSet's uid.
func podJSON(name, owner string, annotations map[string]string) map[string]any {
	md := map[string]any{"name": name, "namespace": "default", "labels": map[string]string{"app": "web"}}
	if annotations != nil {
		md["annotations"] = annotations
	}
	if owner != "" {
		md["ownerReferences"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7c9d8f6b5", "uid": owner, "controller": true}}
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": md,
		"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "podline/demo:1"}}}}
}
