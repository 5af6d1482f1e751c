package main

import (
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"

	"podline.dev/pkg/client"
)

// dialAPIServer is the one place the kubelet connects to the apiserver:
// host:port over TCP, or unix:///path. Calls carry the caller's trace
// context, so the apiserver's spans of the kubelet's writes join the
// kubelet's traces. With credentials (--kubeconfig, or --ca-file,
// --cert-file and --key-file) it speaks TLS and presents the node's client
// certificate (system:node:<name> in system:nodes); without, plain gRPC.
func dialAPIServer(target string, creds client.Credentials) (*grpc.ClientConn, error) {
	opts, err := creds.DialOptions()
	if err != nil {
		return nil, err
	}
	return grpc.NewClient(target, append(opts, grpc.WithStatsHandler(otelgrpc.NewClientHandler()))...)
}
