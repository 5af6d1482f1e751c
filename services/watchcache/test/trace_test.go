package test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"podline.dev/pkg/client"
	"podline.dev/pkg/telemetry"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
)

// recordSpans installs one span recorder as the global tracer provider, once
// for the package (tracers bind to the first provider installed); tests
// tell their spans apart by trace id.
var recordSpans = sync.OnceValue(func() *tracetest.SpanRecorder {
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	otel.SetTextMapPropagator(propagation.TraceContext{})
	return rec
})

// The publish and the fan-out of a write are spans of the write's trace, so
// a Pod's birth stays one trace across the cache.
func TestPublishAndFanOutJoinTheObjectsTrace(t *testing.T) {
	rec := recordSpans()
	ctx := ctxFor(t)
	n := startNATS(t)
	api := apiservertest.Start(t, apiservertest.WithNATS(n.URL))
	rep := startReplica(t, n.URL, api)
	pods := client.Pods(api.Conn)
	from := listRV(t, ctx, pods)
	w, err := client.Pods(rep.Conn).Watch(ctx, &metav1.ListRequest{ResourceVersion: from})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	// The apiserver's request span is the write's trace; it stamps it on the object.
	if _, err := pods.Create(ctx, pod("traced", nil)); err != nil {
		t.Fatal(err)
	}
	ev := collect(t, w, 1, 30*time.Second)[0]
	tp := ev.Object.GetMetadata().GetAnnotations()[telemetry.TraceparentAnnotation]
	parts := strings.Split(tp, "-")
	if len(parts) != 4 {
		t.Fatalf("the object through the cache has traceparent %q", tp)
	}
	want := parts[1]
	seen := map[string]bool{}
	deadline := time.Now().Add(5 * time.Second)
	for len(seen) < 2 && time.Now().Before(deadline) {
		for _, sp := range rec.Ended() {
			if sp.SpanContext().TraceID().String() == want && (sp.Name() == "natspub.Publish" || sp.Name() == "watchcache.FanOut") {
				seen[sp.Name()] = true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !seen["natspub.Publish"] || !seen["watchcache.FanOut"] {
		t.Errorf("spans of trace %s: %v, want natspub.Publish and watchcache.FanOut", want, seen)
	}
}
