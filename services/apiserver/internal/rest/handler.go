package rest

import (
	"context"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"

	"podline.dev/proto/all"
)

// NewHandler returns the REST API: discovery and health on a plain mux,
// every resource route through the gateway over conn (the in-process
// connection to the gRPC services).
func NewHandler(ctx context.Context, conn *grpc.ClientConn, live, ready []Check) (http.Handler, error) {
	gw := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, marshaler{}),
		runtime.WithErrorHandler(errorHandler),
		runtime.WithRoutingErrorHandler(routingErrorHandler),
		runtime.WithForwardResponseOption(forwardResponse),
		runtime.WithForwardResponseRewriter(rewriteResponse),
		runtime.WithOutgoingHeaderMatcher(func(string) (string, bool) { return "", false }),
	)
	for _, register := range all.Gateways {
		if err := register(ctx, gw, conn); err != nil {
			return nil, err
		}
	}
	mux := http.NewServeMux()
	if err := registerDiscovery(mux); err != nil {
		return nil, err
	}
	registerHealth(mux, live, ready)
	if err := registerOpenAPI(mux); err != nil {
		return nil, err
	}
	mux.Handle("/", withPatch(withNegotiation(withWatchRoute(withRequestState(gw)))))
	return mux, nil
}
