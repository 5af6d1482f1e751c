package main

import (
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// dialAPIServer is the one place the kubelet connects to the apiserver:
// host:port over TCP, or unix:///path. Calls carry the caller's trace
// context, so the apiserver's spans of the kubelet's writes join the
// kubelet's traces. Plain gRPC for now; TLS with the node's client
// certificate (system:node:<name>) goes here when the apiserver
// authenticates.
func dialAPIServer(target string) (*grpc.ClientConn, error) {
	return grpc.NewClient(target,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler()),
	)
}
