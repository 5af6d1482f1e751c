package test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"podline.dev/pkg/telemetry"
	"podline.dev/services/scheduler/internal/metrics"
	"podline.dev/services/scheduler/internal/profile"
	"podline.dev/services/scheduler/internal/scheduler"
	st "podline.dev/services/scheduler/testing"
)

func TestAttemptIsASpanUnderThePodsTraceWithAChildPerExtensionPoint(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{}) // as telemetry.Setup does in every component
	t.Cleanup(func() { otel.SetTracerProvider(prev); otel.SetTextMapPropagator(prevProp) })

	e := newEnv(t)
	// Propagate spans to the apiserver as the scheduler's own connection does.
	conn, err := grpc.NewClient(e.s.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithStatsHandler(otelgrpc.NewClientHandler()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	e.schedConn = conn
	e.sched = e.runScheduler(profile.Default())
	for i, z := range []string{"a", "b", "c"} {
		n := st.MakeNode().Name("node-"+string(rune('1'+i))).Zone(z).Capacity("4", "8Gi")
		if z == "c" {
			n.Taint("node-role.kubernetes.io/control-plane", "", "NoSchedule")
		}
		e.createNode(n.Obj())
	}
	// The apiserver stamps the pod with the span of its create: the
	// scheduler's attempt must be that span's child.
	created := e.createPod(st.MakePod().Name("traced").Req("100m", "64Mi").Obj())
	parent, err := otelTraceparent(created.GetMetadata().GetAnnotations()[telemetry.TraceparentAnnotation])
	if err != nil {
		t.Fatal(err)
	}
	e.waitBound("traced", 10*time.Second)

	var attempt sdktrace.ReadOnlySpan
	e.eventually(5*time.Second, "the SchedulePod span to end", func() bool {
		for _, s := range rec.Ended() {
			if s.Name() == "SchedulePod" {
				attempt = s
				return true
			}
		}
		return false
	})
	traceID := attempt.SpanContext().TraceID().String()
	if attempt.SpanContext().TraceID() != parent.TraceID() || attempt.Parent().SpanID() != parent.SpanID() {
		t.Errorf("attempt span in trace %s under %s, want the pod's traceparent %s-%s", traceID, attempt.Parent().SpanID(), parent.TraceID(), parent.SpanID())
	}
	children := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		if s.Parent().SpanID() == attempt.SpanContext().SpanID() {
			children[s.Name()] = s
		}
	}
	for _, name := range []string{"PreFilter", "Filter", "PreScore", "Score", "Reserve", "Permit", "WaitOnPermit", "PreBind", "Bind", "PostBind"} {
		if children[name] == nil {
			t.Errorf("no %s span under the attempt", name)
		}
	}
	attrs := map[string]string{}
	for _, name := range []string{"Filter", "Score"} {
		if s := children[name]; s != nil {
			for _, kv := range s.Attributes() {
				attrs[string(kv.Key)] = kv.Value.Emit()
			}
		}
	}
	if got := attrs["filter.node.node-3"]; got != "TaintToleration: node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }" {
		t.Errorf("filter verdict of node-3 = %q", got)
	}
	if got := attrs["filter.node.node-1"]; got != "passed" {
		t.Errorf("filter verdict of node-1 = %q", got)
	}
	if got := attrs["score.rank.01"]; !strings.Contains(got, "total=") || !strings.Contains(got, "NodeResourcesFit=") || !strings.Contains(got, "TaintToleration=") {
		t.Errorf("score.rank.01 = %q", got)
	}
	// The binding continued the trace: the pod's traceparent is now in it.
	if tp2 := e.getPod("traced").GetMetadata().GetAnnotations()[telemetry.TraceparentAnnotation]; !strings.Contains(tp2, traceID) {
		t.Errorf("pod traceparent = %q, want one in trace %s", tp2, traceID)
	}
	if ev := e.eventFor("Scheduled", "traced"); ev == nil || !strings.Contains(ev.GetMetadata().GetAnnotations()[telemetry.TraceparentAnnotation], traceID) {
		t.Errorf("the Scheduled event is not in the trace: %v", ev)
	}
}

// otelTraceparent parses a W3C traceparent into a span context.
func otelTraceparent(tp string) (trace.SpanContext, error) {
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return sc, fmt.Errorf("bad traceparent %q", tp)
	}
	return sc, nil
}

func TestMetricsEndpoint(t *testing.T) {
	m := metrics.New()
	e := start(t, scheduler.WithMetrics(m))
	e.createNode(st.MakeNode().Name("node-1").Capacity("1", "1Gi").Obj())
	e.createPod(st.MakePod().Name("fits").Req("100m", "").Obj())
	e.createPod(st.MakePod().Name("too-big").Req("4", "").Obj())
	e.waitBound("fits", 10*time.Second)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	// The unschedulable attempt is counted before the pod reaches its
	// queue, so wait for the whole picture, then check each line.
	wants := []string{
		`scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"} 1`,
		`scheduler_e2e_scheduling_duration_seconds_count{profile="default-scheduler",result="scheduled"} 1`,
		`scheduler_pending_pods{queue="unschedulable"} 1`,
		`scheduler_pending_pods{queue="active"} 0`,
		`scheduler_scheduling_attempt_duration_seconds_bucket`,
		`scheduler_preemption_attempts_total 1`,
	}
	var text string
	e.eventually(10*time.Second, "the metrics to show both attempts and the queues", func() bool {
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			return false
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		text = string(b)
		for _, want := range wants {
			if !strings.Contains(text, want) {
				return false
			}
		}
		return true
	})
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}
