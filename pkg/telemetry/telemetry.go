package telemetry

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/credentials"

	"podline.dev/pkg/object"
	"podline.dev/pkg/pki"
)

// TraceparentAnnotation holds the W3C traceparent of the span that last wrote an object.
const TraceparentAnnotation = "podline.dev/traceparent"

// EndpointFlagUsage is the help of a component's --otlp-endpoint flag,
// whose value it passes to Setup.
const EndpointFlagUsage = "OTLP/gRPC endpoint for spans: https://host:port (TLS, verified with the CA file in $OTEL_EXPORTER_OTLP_CERTIFICATE), " +
	"http://host:port (plain text), or host:port (TLS when that CA is set); empty uses $OTEL_EXPORTER_OTLP_ENDPOINT"

// Setup installs the global tracer provider and propagator for a component.
// Spans go over OTLP/gRPC to endpoint, or to $OTEL_EXPORTER_OTLP_ENDPOINT
// when endpoint is ""; with neither, spans are made but not exported. The
// endpoint's form and the CA file of $OTEL_EXPORTER_OTLP_CERTIFICATE decide
// whether the spans travel over TLS (see exporterOptions). The returned func
// flushes and stops the exporter.
func Setup(ctx context.Context, service, endpoint string) (func(context.Context) error, error) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	res := resource.NewSchemaless(semconv.ServiceName(service))
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithSampler(sdktrace.AlwaysSample())}
	if endpoint == "" {
		endpoint = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	if endpoint != "" {
		expOpts, err := exporterOptions(endpoint, caFile())
		if err != nil {
			return nil, err
		}
		exp, err := otlptracegrpc.New(ctx, expOpts...)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(time.Second)))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}

// caEnv are the OpenTelemetry variables naming the CA file that verifies
// the collector, the traces' own first.
var caEnv = []string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE"}

func caFile() string {
	for _, k := range caEnv {
		if v := os.Getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// exporterOptions are the exporter's endpoint and transport security:
//
//	https://host:port  TLS, the collector verified by the CA in ca, or by
//	                   the system's roots when ca is ""
//	host:port          TLS as above when ca is given, else plain text
//	http://host:port   plain text, for tests and local runs; with ca it is
//	                   an error, since the spans would go unprotected
//	                   although a CA says they should not
//
// They are set explicitly, so the exporter's own reading of the same
// variables (which would take host:port as TLS with the system's roots)
// does not apply. The collector's name for verification is the host.
func exporterOptions(endpoint, ca string) ([]otlptracegrpc.Option, error) {
	scheme, hostport := "", endpoint
	if i := strings.Index(endpoint, "://"); i >= 0 {
		scheme, hostport = strings.ToLower(endpoint[:i]), endpoint[i+3:]
	}
	secure := false
	switch scheme {
	case "https":
		secure = true
	case "":
		secure = ca != ""
	case "http":
		if ca != "" {
			return nil, fmt.Errorf("%w: %s is plain text, but a CA file (%s) asks for TLS", ErrOTLPEndpoint, endpoint, ca)
		}
	default:
		return nil, fmt.Errorf("%w: %s: scheme %q (want https://, http:// or none)", ErrOTLPEndpoint, endpoint, scheme)
	}
	opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(hostport)}
	if !secure {
		return append(opts, otlptracegrpc.WithInsecure()), nil
	}
	// Without a CA, the system's roots verify the collector.
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		var err error
		if cfg, err = pki.ClientTLS(ca, "", ""); err != nil {
			return nil, fmt.Errorf("OTLP CA: %w", err)
		}
	}
	return append(opts, otlptracegrpc.WithTLSCredentials(credentials.NewTLS(cfg))), nil
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
