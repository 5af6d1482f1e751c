// Package jaegertest runs the real Jaeger for tests: bin/jaeger (built by
// `make tools`) with otel/jaeger.yaml, the configuration compose runs, so
// spans come in over OTLP/gRPC with TLS and the query API answers over
// HTTPS. Its serving pair comes from a cluster PKI that pki.Generate makes
// for the test; only the listen addresses (free loopback ports) and the
// pair's paths differ from compose. A test is skipped when bin/jaeger has
// not been built.
package jaegertest

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"podline.dev/pkg/pki"
	"podline.dev/pkg/testenv"
)

// Jaeger is one running Jaeger.
type Jaeger struct {
	// OTLP is the host:port of the OTLP/gRPC receiver (TLS, by the name
	// 127.0.0.1).
	OTLP string
	// Query is the base URL of the query API, https://127.0.0.1:<port>.
	Query string
	// CAFile is the cluster CA that signed Jaeger's serving certificate.
	CAFile string
}

// Start runs Jaeger until the test ends and waits until its query API
// answers.
func Start(t testing.TB) *Jaeger {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin", "jaeger")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("bin/jaeger not built (make tools builds it): %v", err)
	}
	dir := t.TempDir()
	pkiDir := NewPKI(t, filepath.Join(dir, "cluster"))
	crt := filepath.Join(pkiDir, pki.JaegerDir, "server.crt")
	key := filepath.Join(pkiDir, pki.JaegerDir, "server.key")
	otlp, query, queryGRPC, health := testenv.FreeAddr(t), testenv.FreeAddr(t), testenv.FreeAddr(t), testenv.FreeAddr(t)
	args := []string{"--config", filepath.Join(root, "otel", "jaeger.yaml")}
	for _, set := range []string{
		"receivers.otlp.protocols.grpc.endpoint=" + otlp,
		"receivers.otlp.protocols.grpc.tls.cert_file=" + crt,
		"receivers.otlp.protocols.grpc.tls.key_file=" + key,
		"extensions.jaeger_query.http.endpoint=" + query,
		"extensions.jaeger_query.http.tls.cert_file=" + crt,
		"extensions.jaeger_query.http.tls.key_file=" + key,
		"extensions.jaeger_query.grpc.endpoint=" + queryGRPC,
		"extensions.jaeger_query.grpc.tls.cert_file=" + crt,
		"extensions.jaeger_query.grpc.tls.key_file=" + key,
		"extensions.healthcheckv2.http.endpoint=" + health,
	} {
		args = append(args, "--set", set)
	}
	cmd := exec.Command(bin, args...)
	logf, err := os.Create(filepath.Join(dir, "jaeger.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = logf.Close()
		if t.Failed() {
			log, _ := os.ReadFile(logf.Name())
			t.Logf("jaeger log:\n%s", log)
		}
	})
	j := &Jaeger{OTLP: otlp, Query: "https://" + query, CAFile: filepath.Join(pkiDir, "ca.crt")}
	hc := j.Client(t)
	testenv.Eventually(t, 60*time.Second, "jaeger's query API answers", func() error {
		resp, err := hc.Get(j.Query + "/api/services")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s", resp.Status)
		}
		return nil
	})
	return j
}

// Client is an HTTP client that trusts the cluster CA of Jaeger's pair.
func (j *Jaeger) Client(t testing.TB) *http.Client {
	t.Helper()
	return &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{TLSClientConfig: TLSConfig(t, j.CAFile)}}
}

// NewPKI makes a cluster's CAs and certificates under dir, as `make certs`
// does, and returns the directory holding them (ca.crt, jaeger/, ...). A
// second call with another dir makes an unrelated cluster CA.
func NewPKI(t testing.TB, dir string) string {
	t.Helper()
	pkiDir := filepath.Join(dir, "pki")
	if _, err := pki.Generate(pki.WithDir(pkiDir),
		pki.WithAdminKubeconfig(filepath.Join(dir, "kubeconfig")),
		pki.WithKubeconfigDir(filepath.Join(dir, "kubeconfigs"))); err != nil {
		t.Fatal(err)
	}
	return pkiDir
}

// TLSConfig is a client configuration that trusts only the CA in caFile.
func TLSConfig(t testing.TB, caFile string) *tls.Config {
	t.Helper()
	cfg, err := pki.ClientTLS(caFile, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Operations counts the spans Jaeger's query API at query holds of
// traceID, per service and operation name. A trace Jaeger does not know
// (404) has none; more than one trace under the id is an error.
func Operations(hc *http.Client, query, traceID string) (map[string]map[string]int, error) {
	resp, err := hc.Get(query + "/api/traces/" + traceID)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]map[string]int{}
	if resp.StatusCode == http.StatusNotFound {
		return out, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET trace %s: %s", traceID, resp.Status)
	}
	var body struct {
		Data []struct {
			Spans []struct {
				OperationName string `json:"operationName"`
				ProcessID     string `json:"processID"`
			} `json:"spans"`
			Processes map[string]struct {
				ServiceName string `json:"serviceName"`
			} `json:"processes"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	if len(body.Data) > 1 {
		return nil, fmt.Errorf("jaeger returned %d traces for %s", len(body.Data), traceID)
	}
	for _, tr := range body.Data {
		for _, s := range tr.Spans {
			svc := tr.Processes[s.ProcessID].ServiceName
			if out[svc] == nil {
				out[svc] = map[string]int{}
			}
			out[svc][s.OperationName]++
		}
	}
	return out, nil
}
