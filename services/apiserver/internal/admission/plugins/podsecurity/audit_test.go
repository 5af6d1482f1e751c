package podsecurity

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/admission"
)

// Audit mode admits the pod silently and records the violation on the
// request's admission span.
func TestAuditRecordsOnTheSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	ctx, sp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("t").Start(context.Background(), "admission")
	pods, _ := apis.Lookup("", "pods")
	p := New(admission.NewMemory("", "namespaces", &corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: "audited",
		Labels: map[string]string{LabelPrefix + ModeAudit: "baseline"}}}), nil)
	pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "x"}, Spec: plainSpec()}
	pod.Spec.HostPid = true
	a := &admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "audited", Name: "x", Object: pod}
	if err := p.Validate(ctx, a); err != nil || len(a.Warnings()) > 0 {
		t.Fatalf("audit mode: %v, warnings %v", err, a.Warnings())
	}
	sp.End()
	var got string
	for _, kv := range rec.Ended()[0].Attributes() {
		if kv.Key == AttrAudit {
			got = kv.Value.AsString()
		}
	}
	if !strings.HasPrefix(got, `would violate PodSecurity "baseline:latest": host namespaces (hostPID=true)`) {
		t.Fatalf("%s = %q", AttrAudit, got)
	}
}
