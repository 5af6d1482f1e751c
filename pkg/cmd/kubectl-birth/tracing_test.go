package main

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc/credentials"

	"podline.dev/pkg/jaegertest"
)

// exportTo returns a tracer provider that sends service's spans over OTLP
// gRPC with TLS to j as each ends, verifying it with j's cluster CA; it is
// shut down when the test ends.
func exportTo(t *testing.T, service string, j *jaegertest.Jaeger) *sdktrace.TracerProvider {
	t.Helper()
	exp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(j.OTLP),
		otlptracegrpc.WithTLSCredentials(credentials.NewTLS(jaegertest.TLSConfig(t, j.CAFile))))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(service))))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp
}

// The in-process apiserver traces through otel's global provider, which
// binds its tracers to the first provider ever set. The tests set one
// switchable provider once and point it at a test's exporter for that test
// only, so other tests' apiservers stamp no traceparent.
var (
	installGlobal sync.Once
	globalTarget  atomic.Pointer[trace.TracerProvider]
)

// traceAPIServerTo makes the apiserver's spans go to tp until the test ends.
func traceAPIServerTo(t *testing.T, tp trace.TracerProvider) {
	installGlobal.Do(func() {
		otel.SetTracerProvider(switchable{})
		otel.SetTextMapPropagator(propagation.TraceContext{})
	})
	globalTarget.Store(&tp)
	t.Cleanup(func() { globalTarget.Store(nil) })
}

type switchable struct{ embedded.TracerProvider }

func (switchable) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return switchTracer{name: name, opts: opts}
}

type switchTracer struct {
	embedded.Tracer
	name string
	opts []trace.TracerOption
}

func (s switchTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if tp := globalTarget.Load(); tp != nil {
		return (*tp).Tracer(s.name, s.opts...).Start(ctx, name, opts...)
	}
	return noop.NewTracerProvider().Tracer(s.name).Start(ctx, name, opts...)
}
