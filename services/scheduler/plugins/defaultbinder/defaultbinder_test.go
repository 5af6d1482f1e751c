package defaultbinder

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"podline.dev/pkg/client"
	"podline.dev/pkg/telemetry"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/scheduler/internal/framework"
	st "podline.dev/services/scheduler/testing"
)

func TestBindWritesTheBindingAndItsTraceparent(t *testing.T) {
	s := apiservertest.Start(t)
	ctx := context.Background()
	pod, err := client.Pods(s.Conn).Create(ctx, st.MakePod().Name("web-x").Container("nginx").Obj())
	if err != nil {
		t.Fatal(err)
	}
	h := st.NewHandle(nil)
	h.Client = s.Conn
	pl, _ := New(ctx, nil, h)

	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	spanCtx := trace.ContextWithSpanContext(ctx, sc)
	if st := pl.(*DefaultBinder).Bind(spanCtx, framework.NewCycleState(), pod, "node-1"); !st.IsSuccess() {
		t.Fatal(st)
	}
	got, err := client.Pods(s.Conn).Get(ctx, "default", "web-x")
	if err != nil {
		t.Fatal(err)
	}
	if got.GetSpec().GetNodeName() != "node-1" {
		t.Errorf("nodeName = %q", got.GetSpec().GetNodeName())
	}
	if tp := got.GetMetadata().GetAnnotations()[telemetry.TraceparentAnnotation]; tp != "00-01000000000000000000000000000000-0200000000000000-01" {
		t.Errorf("traceparent = %q", tp)
	}
	// Binding again is a conflict, reported as an Error status.
	if st := pl.(*DefaultBinder).Bind(ctx, framework.NewCycleState(), pod, "node-2"); st.Code() != framework.Error {
		t.Errorf("second Bind = %v, want Error", st)
	}
}
