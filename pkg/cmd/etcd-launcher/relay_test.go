package main

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"podline.dev/pkg/jaegertest"
	"podline.dev/pkg/pki"
)

// receiver is an OTLP/gRPC trace receiver that serves TLS only, with
// Jaeger's serving pair of a test cluster, and records the names of the
// spans it is sent.
type receiver struct {
	collectortrace.UnimplementedTraceServiceServer
	addr string

	mu    sync.Mutex
	spans []string
}

func (r *receiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, s.GetName())
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (r *receiver) received() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.spans...)
}

// startReceiver serves OTLP over TLS with pkiDir's Jaeger pair until the
// test ends.
func startReceiver(t *testing.T, pkiDir string) *receiver {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(pkiDir, pki.JaegerDir, "server.crt"), filepath.Join(pkiDir, pki.JaegerDir, "server.key"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})))
	r := &receiver{addr: l.Addr().String()}
	collectortrace.RegisterTraceServiceServer(srv, r)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return r
}

// startRelay runs a relay on a loopback port to upstream, verified with
// caFile, until the test ends, and returns its address.
func startRelay(t *testing.T, upstream, caFile string) string {
	t.Helper()
	r, err := newRelay(upstream, caFile, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	l, err := listenLoopback("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.serve(l) }()
	t.Cleanup(func() { l.Close() })
	return l.Addr().String()
}

// exportThrough sends one span named name as etcd's exporter does: OTLP
// over gRPC in plain text to addr, without retrying. It returns the
// export's error.
func exportThrough(t *testing.T, addr, name string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(addr), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("etcd"))))
	_, span := tp.Tracer("relay-test").Start(ctx, name)
	span.End()
	err = tp.ForceFlush(ctx)
	_ = tp.Shutdown(ctx)
	return err
}

// etcd's plain-text OTLP export reaches a TLS-only receiver through the
// relay, which verifies the receiver with the cluster CA.
func TestRelayCarriesPlainOTLPOverTLS(t *testing.T) {
	pkiDir := jaegertest.NewPKI(t, t.TempDir())
	rcv := startReceiver(t, pkiDir)

	// Straight to the receiver, the plain-text export fails.
	if err := exportThrough(t, rcv.addr, "direct"); err == nil {
		t.Fatal("a plain-text export to the TLS receiver succeeded")
	}

	relay := startRelay(t, rcv.addr, filepath.Join(pkiDir, "ca.crt"))
	if err := exportThrough(t, relay, "through the relay"); err != nil {
		t.Fatalf("export through the relay: %v", err)
	}
	if got := rcv.received(); len(got) != 1 || got[0] != "through the relay" {
		t.Fatalf("receiver got spans %q, want only the relayed one", got)
	}
}

// A receiver whose certificate another CA signed gets nothing: the relay
// refuses it, and the export fails.
func TestRelayRefusesAReceiverOfAnotherCA(t *testing.T) {
	rcv := startReceiver(t, jaegertest.NewPKI(t, t.TempDir()))
	otherCA := filepath.Join(jaegertest.NewPKI(t, t.TempDir()), "ca.crt")
	relay := startRelay(t, rcv.addr, otherCA)
	if err := exportThrough(t, relay, "refused"); err == nil {
		t.Fatal("the export through the relay succeeded")
	}
	if got := rcv.received(); len(got) != 0 {
		t.Fatalf("receiver got spans %q", got)
	}
}

// What arrives at the relay is plain text, so it listens on loopback only.
func TestRelayListensOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "localhost:0"} {
		if l, err := listenLoopback(addr); err == nil {
			l.Close()
			t.Errorf("listened on %s", addr)
		} else if !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%s: %v", addr, err)
		}
	}
}
