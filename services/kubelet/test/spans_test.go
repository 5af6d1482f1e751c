package test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
)

// The sync of a new pod continues the pod's trace, with a child span per
// step up to the first readiness.
func TestSyncOfANewPodIsAChildOfItsTraceparent(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	n := startFakeNode(t, nil, fakeOpts{})
	ctx, parent := otel.Tracer("test").Start(context.Background(), "kubectl apply")
	pod := makePod("traced").node(nodeName).container("web", webImage).obj()
	telemetry.Stamp(ctx, pod)
	parent.End()
	created, err := n.pods.Create(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	// The apiserver stamps its own span of the write (continuing ours
	// when the call carried it): that is the traceparent the kubelet sees.
	sc := trace.SpanContextFromContext(telemetry.ContextFromObject(context.Background(), created))
	if !sc.IsValid() {
		t.Fatalf("created pod has no traceparent: %v", created.GetMetadata().GetAnnotations())
	}
	p := waitPod(t, n.pods, "traced", 10*time.Second, "Ready", func(p *corev1.Pod) bool { return condition(p, "Ready") == "True" })

	var sync sdktrace.ReadOnlySpan
	eventually(t, 5*time.Second, "SyncPod span", func() (bool, string) {
		for _, s := range rec.Ended() {
			if s.Name() == "SyncPod" && s.Parent().SpanID() == sc.SpanID() {
				sync = s
				return true, ""
			}
		}
		return false, ""
	})
	if sync.SpanContext().TraceID() != sc.TraceID() {
		t.Fatal("SyncPod is in another trace")
	}
	want := []string{"Admit", "MountVolumes", "RunPodSandbox", "PullImage", "CreateContainer", "StartContainer", "FirstReadiness"}
	eventually(t, 5*time.Second, "child spans", func() (bool, string) {
		var got []string
		for _, s := range rec.Ended() {
			if s.Parent().SpanID() == sync.SpanContext().SpanID() {
				got = append(got, s.Name())
			}
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false, "children: " + strings.Join(got, ", ")
			}
		}
		return true, ""
	})

	// The status write carries the kubelet's span as the pod's traceparent.
	p, err = n.pods.Get(context.Background(), "default", "traced")
	if err != nil {
		t.Fatal(err)
	}
	tp := p.GetMetadata().GetAnnotations()[telemetry.TraceparentAnnotation]
	if !strings.Contains(tp, sync.SpanContext().TraceID().String()) {
		t.Fatalf("traceparent %q is not in the pod's trace %s", tp, sync.SpanContext().TraceID())
	}
}
