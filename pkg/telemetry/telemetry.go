package telemetry

import (
	"context"
	"os"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"podline.dev/pkg/object"
)

// TraceparentAnnotation holds the W3C traceparent of the span that last wrote an object.
const TraceparentAnnotation = "podline.dev/traceparent"

// Setup installs the global tracer provider and propagator for a component.
// Spans go over OTLP/gRPC to endpoint (host:port, e.g. jaeger:4317), or to
// $OTEL_EXPORTER_OTLP_ENDPOINT when endpoint is ""; with neither, spans are
// made but not exported. The returned func flushes and stops the exporter.
func Setup(ctx context.Context, service, endpoint string) (func(context.Context) error, error) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	res := resource.NewSchemaless(semconv.ServiceName(service))
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithSampler(sdktrace.AlwaysSample())}
	if endpoint == "" {
		endpoint = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if endpoint != "" {
		exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(trimScheme(endpoint)), otlptracegrpc.WithInsecure())
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

func trimScheme(endpoint string) string {
	for _, p := range []string{"http://", "https://"} {
		if len(endpoint) > len(p) && endpoint[:len(p)] == p {
			return endpoint[len(p):]
		}
	}
	return endpoint
}

// ContextFromObject returns ctx carrying the span context stamped on obj, if any.
func ContextFromObject(ctx context.Context, obj object.Object) context.Context {
	tp := obj.GetMetadata().GetAnnotations()[TraceparentAnnotation]
	if tp == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
}

// StartFromObject starts a span that is a child of the traceparent stamped
// on obj (or of ctx's span when obj has none).
func StartFromObject(ctx context.Context, obj object.Object, tracer, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	ctx = ContextFromObject(ctx, obj)
	return otel.Tracer(tracer).Start(ctx, name, opts...)
}

// Stamp writes ctx's span as obj's traceparent annotation, so the next
// component's span joins the trace. It does nothing without a valid span.
func Stamp(ctx context.Context, obj object.Object) {
	tp := Traceparent(ctx)
	if tp == "" || obj.GetMetadata() == nil {
		return
	}
	md := obj.GetMetadata()
	if md.Annotations == nil {
		md.Annotations = map[string]string{}
	}
	md.Annotations[TraceparentAnnotation] = tp
}

// Traceparent is ctx's span as a W3C traceparent, or "".
func Traceparent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier["traceparent"]
}
