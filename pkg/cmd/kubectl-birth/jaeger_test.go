package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// jaegerBinary is bin/jaeger at the repository's root (built by `make tools`).
const jaegerBinary = "../../../bin/jaeger"

// jaeger is a real Jaeger all-in-one on free loopback ports.
type jaeger struct {
	OTLP  string // host:port of the OTLP gRPC receiver
	Query string // base URL of the query API
}

// jaegerConfig is Jaeger v2's all-in-one reduced to what the test needs:
// OTLP gRPC in, memory storage, the query API; its own metrics off.
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: %s
    grpc:
      endpoint: %s
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`

// startJaeger runs bin/jaeger until the test ends; the test is skipped
// when the binary has not been built.
func startJaeger(t *testing.T) *jaeger {
	t.Helper()
	bin, err := filepath.Abs(jaegerBinary)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s not built (make tools builds it): %v", jaegerBinary, err)
	}
	query, queryGRPC, otlp := freeAddr(t), freeAddr(t), freeAddr(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(jaegerConfig, query, queryGRPC, otlp)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg)
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
	j := &jaeger{OTLP: otlp, Query: "http://" + query}
	eventually(t, 60*time.Second, "jaeger answers /api/services", func() error {
		resp, err := http.Get(j.Query + "/api/services")
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

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// eventually polls check until it returns nil or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
