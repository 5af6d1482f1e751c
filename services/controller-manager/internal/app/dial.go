package app

import (
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Dial connects to the apiserver at addr (host:port): plain gRPC unless
// opts bring transport credentials (the controller-manager's client
// certificate and the cluster CA, from pkg/client.Credentials), which
// replace the plain ones. The stats handler carries
// each reconcile's span to the apiserver, whose request span, and so the
// traceparent it stores on the object written, joins the trace.
func Dial(addr string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler()),
	}, opts...)...)
}
