//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// root is the repository: the e2e module sits at its top level.
var root = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Dir(wd)
}()

var (
	apiserverURL = envOr("PODLINE_APISERVER", "https://127.0.0.1:6443")
	jaegerURL    = envOr("PODLINE_JAEGER", "https://127.0.0.1:16686")
	kubeconfig   = filepath.Join(root, ".podline", "kubeconfig")
	kubectlBin   = filepath.Join(root, "bin", "kubectl")
)

// The demo image every node pulls from the in-cluster registry.
const webImage = "registry.podline:5000/demo/web:1.0"

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// run runs a command in the repository and returns its stdout; stderr and
// the exit status come back in err.
func run(ctx context.Context, stdin string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "COMPOSE_PROJECT_NAME=podline")
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// kubectl runs bin/kubectl with the admin kubeconfig.
func kubectl(t testing.TB, stdin string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return run(ctx, stdin, kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
}

func mustKubectl(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	out, err := kubectl(t, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compose runs docker compose (v2) or docker-compose (v1) on compose.yaml.
func compose(t testing.TB, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := run(ctx, "", "docker", "compose", "version"); err == nil {
		return run(ctx, "", "docker", append([]string{"compose"}, args...)...)
	}
	return run(ctx, "", "docker-compose", args...)
}

func mustCompose(t testing.TB, args ...string) string {
	t.Helper()
	out, err := compose(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// inNode runs a command inside a node container.
func inNode(t testing.TB, node string, cmd ...string) (string, error) {
	t.Helper()
	return compose(t, append([]string{"exec", "-T", node}, cmd...)...)
}

// eventually polls fn until it returns nil or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s: %v", what, timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// clusterCA verifies the apiserver and Jaeger, both serving with
// certificates of the cluster CA (empty when `make certs` has not run: the
// tests then fail on their first request).
var clusterCA = func() *x509.CertPool {
	pool := x509.NewCertPool()
	if ca, err := os.ReadFile(filepath.Join(root, ".podline", "pki", "ca.crt")); err == nil {
		pool.AppendCertsFromPEM(ca)
	}
	return pool
}()

// api is a REST client with the admin's certificate.
var api = func() *http.Client {
	cfg := &tls.Config{RootCAs: clusterCA}
	if cert, err := tls.LoadX509KeyPair(filepath.Join(root, ".podline", "pki", "admin.crt"),
		filepath.Join(root, ".podline", "pki", "admin.key")); err == nil {
		cfg.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}()

// jaeger is a client of Jaeger's query API, which serves HTTPS with a
// certificate of the cluster CA.
var jaeger = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: clusterCA}}}

// request sends a REST request; body, when not nil, is sent as JSON. It
// returns the status code and the response body.
func request(t testing.TB, method, path string, body any, header http.Header) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, apiserverURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := api.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// getJSON GETs path and decodes the answer into out; it fails the test
// unless the answer is 200.
func getJSON(t testing.TB, path string, out any) {
	t.Helper()
	if err := tryGetJSON(t, path, out); err != nil {
		t.Fatal(err)
	}
}

// tryGetJSON is getJSON returning the failure.
func tryGetJSON(t testing.TB, path string, out any) error {
	t.Helper()
	code, b := request(t, http.MethodGet, path, nil, nil)
	if code != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, code, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("GET %s: %v", path, err)
	}
	return nil
}

func decodeJSON(r io.Reader, out any) error { return json.NewDecoder(r).Decode(out) }
