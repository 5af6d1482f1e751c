package test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// spans records every span of the package's tests.
var (
	spans    = tracetest.NewSpanRecorder()
	provider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
)

func installTracing() {
	otel.SetTracerProvider(provider)
	otel.SetTextMapPropagator(propagation.TraceContext{})
}

// TestRuntimeSpansContinueTheCallersTrace: the kubelet's trace context
// travels in gRPC metadata, RunPodSandbox is a server span under the
// caller's span, and CNI ADD and CNI DEL are children of the runtime's
// RunPodSandbox and StopPodSandbox spans.
func TestRuntimeSpansContinueTheCallersTrace(t *testing.T) {
	n := startNode(t)
	conn, err := grpc.NewClient("unix://"+n.cfg.Listen, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithTracerProvider(provider))),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", strings.TrimPrefix(addr, "unix://"))
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)

	ctx, parent := provider.Tracer("kubelet").Start(n.ctx(), "SyncPod")
	cfg := makeSandbox("traced", filepath.Join(n.dir, "pods", "traced")).obj()
	resp, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: resp.PodSandboxId}); err != nil {
		t.Fatal(err)
	}
	parent.End()

	traceID := parent.SpanContext().TraceID()
	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		if s.SpanContext().TraceID() == traceID && s.SpanKind().String() != "client" {
			byName[s.Name()] = s
		}
	}
	run, ok := byName["runtime.v1.RuntimeService/RunPodSandbox"]
	if !ok {
		t.Fatalf("no server span of RunPodSandbox in the caller's trace; spans: %v", names(byName))
	}
	add, ok := byName["CNI ADD"]
	if !ok || add.Parent().SpanID() != run.SpanContext().SpanID() {
		t.Fatalf("CNI ADD is not a child of RunPodSandbox; spans: %v", names(byName))
	}
	stop, ok := byName["runtime.v1.RuntimeService/StopPodSandbox"]
	del, ok2 := byName["CNI DEL"]
	if !ok || !ok2 || del.Parent().SpanID() != stop.SpanContext().SpanID() {
		t.Fatalf("CNI DEL is not a child of StopPodSandbox; spans: %v", names(byName))
	}
}

func names(m map[string]sdktrace.ReadOnlySpan) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
