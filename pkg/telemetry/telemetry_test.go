package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

func TestStampedTraceparentMakesTheNextSpanAChild(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))

	ctx, parent := otel.Tracer("writer").Start(context.Background(), "write")
	pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "web"}}
	Stamp(ctx, pod)
	parent.End()
	if pod.Metadata.Annotations[TraceparentAnnotation] == "" {
		t.Fatal("no traceparent stamped")
	}

	_, child := StartFromObject(context.Background(), pod, "reader", "reconcile")
	child.End()
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	if spans[1].Parent().SpanID() != spans[0].SpanContext().SpanID() || spans[1].SpanContext().TraceID() != spans[0].SpanContext().TraceID() {
		t.Fatal("reconcile span is not a child of the write span")
	}
}

func TestObjectWithoutTraceparentStartsARoot(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	_, span := StartFromObject(context.Background(), &corev1.Pod{Metadata: &metav1.ObjectMeta{}}, "reader", "reconcile")
	span.End()
	if rec.Ended()[0].Parent().IsValid() {
		t.Fatal("span has a parent")
	}
	Stamp(context.Background(), &corev1.Pod{Metadata: &metav1.ObjectMeta{}}) // no span: no panic, no annotation
}
