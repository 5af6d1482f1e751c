package proxier

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
)

func TestSyncThatFirstProgramsAReadyEndpointIsASpanOfTheSlicesTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	src := NewMemorySource()
	load(src, []*corev1.Service{MakeService("default", "web").ClusterIP("10.96.0.20").Port("", 80, 8080).Obj()},
		[]*discoveryv1.EndpointSlice{MakeSlice("default", "web", "web-1").Port("", 8080).Ready("10.244.1.2").Obj()})
	p := newTestProxier(newRecorder(), src, testNode)
	ctx := context.Background()
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Ended()); n != 0 {
		t.Fatalf("the first sync after start ended %d spans, want none", n)
	}

	sl := MakeSlice("default", "web", "web-1").Port("", 8080).Ready("10.244.1.2", "10.244.1.3").Traceparent(tp).Obj()
	src.SetSlice(sl)
	p.SliceChanged(sl)
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("ended %d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Name() != "SyncProxyRules" || s.Parent().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" ||
		s.Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("span %s parent %s/%s, want SyncProxyRules under the slice's traceparent", s.Name(), s.Parent().TraceID(), s.Parent().SpanID())
	}
	var eps []string
	for _, a := range s.Attributes() {
		if a.Key == "endpoints" {
			eps = a.Value.AsStringSlice()
		}
	}
	if len(eps) != 1 || eps[0] != "10.244.1.3:8080" {
		t.Errorf("span endpoints %v, want only the new one", eps)
	}

	// A sync that programs no new ready endpoint starts none.
	p.ServiceChanged("default/web")
	if err := p.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Ended()); n != 1 {
		t.Errorf("%d spans after a sync with nothing new, want still 1", n)
	}
}
