package telemetry

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel"

	"podline.dev/pkg/jaegertest"
)

// A component's spans reach the real Jaeger over TLS when the collector is
// verified with the cluster CA that signed Jaeger's pair, named by the
// OpenTelemetry variable compose sets, whether the endpoint says https://
// or the CA alone asks for TLS. With another cluster's CA, or in plain
// text, the export fails and nothing arrives.
func TestSpansReachJaegerOverTLSOnlyWithTheClusterCA(t *testing.T) {
	j := jaegertest.Start(t)
	wrongCA := filepath.Join(jaegertest.NewPKI(t, t.TempDir()), "ca.crt")

	for _, tc := range []struct {
		name, service, endpoint, ca string
		delivered                   bool
	}{
		{"https with the cluster CA", "tls-https", "https://" + j.OTLP, j.CAFile, true},
		{"host:port with the cluster CA", "tls-bare", j.OTLP, j.CAFile, true},
		{"https with another CA", "tls-wrong-ca", "https://" + j.OTLP, wrongCA, false},
		{"plain text to the TLS receiver", "plain", "http://" + j.OTLP, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", tc.ca)
			shutdown, err := Setup(context.Background(), tc.service, tc.endpoint)
			if err != nil {
				t.Fatal(err)
			}
			_, span := otel.Tracer("export-test").Start(context.Background(), "exported")
			traceID := span.SpanContext().TraceID().String()
			span.End()
			// The exporter retries a refused export until this deadline.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			shutdownErr := shutdown(ctx)

			if tc.delivered {
				if shutdownErr != nil {
					t.Fatalf("flushing the spans: %v", shutdownErr)
				}
				waitForTrace(t, j, traceID, tc.service)
				return
			}
			if shutdownErr == nil {
				t.Error("flushing the spans reported no error")
			}
			if n, err := traceSpans(t, j, traceID); err != nil || n != 0 {
				t.Errorf("Jaeger holds %d spans of trace %s (%v), want none", n, traceID, err)
			}
		})
	}
}

// Endpoints Setup refuses before exporting anything.
func TestSetupRefusesEndpointsItCannotHonour(t *testing.T) {
	ca := filepath.Join(jaegertest.NewPKI(t, t.TempDir()), "ca.crt")
	for _, tc := range []struct {
		name, endpoint, ca string
		want               error
	}{
		{"plain text although a CA asks for TLS", "http://jaeger:4317", ca, ErrOTLPEndpoint},
		{"a scheme OTLP/gRPC does not speak", "unix:///run/otlp.sock", "", ErrOTLPEndpoint},
		{"a CA file that is not there", "https://jaeger:4317", filepath.Join(t.TempDir(), "none.crt"), fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", tc.ca)
			shutdown, err := Setup(context.Background(), "refused", tc.endpoint)
			if err == nil {
				_ = shutdown(context.Background())
				t.Fatal("Setup accepted it")
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
		})
	}
}

// waitForTrace polls Jaeger until it holds traceID with a span of service.
func waitForTrace(t *testing.T, j *jaegertest.Jaeger, traceID, service string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		services, err := traceServices(t, j, traceID)
		if err == nil && services[service] > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s of %s not in Jaeger within 20s: %v %v", traceID, service, services, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// traceSpans is the number of spans Jaeger holds of traceID (0 when it
// does not know the trace).
func traceSpans(t *testing.T, j *jaegertest.Jaeger, traceID string) (int, error) {
	services, err := traceServices(t, j, traceID)
	n := 0
	for _, c := range services {
		n += c
	}
	return n, err
}

// traceServices counts the spans of traceID per service, from the query
// API over HTTPS.
func traceServices(t *testing.T, j *jaegertest.Jaeger, traceID string) (map[string]int, error) {
	ops, err := jaegertest.Operations(j.Client(t), j.Query, traceID)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for svc, byName := range ops {
		for _, n := range byName {
			out[svc] += n
		}
	}
	return out, nil
}
