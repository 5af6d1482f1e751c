package main

import (
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"

	"podline.dev/pkg/client"
)

// withWatchEndpoint sends the kubelet's List and Watch calls to the
// watchcache replicas at endpoint (none when empty), with the same
// credentials as to the apiserver, and everything else, and the reads the
// replicas cannot take, to api. close releases the replicas' connection.
func withWatchEndpoint(api *grpc.ClientConn, endpoint string, creds client.Credentials) (conn grpc.ClientConnInterface, close func(), err error) {
	if endpoint == "" {
		return api, func() {}, nil
	}
	opts, err := creds.DialOptions()
	if err != nil {
		return nil, nil, err
	}
	w, err := client.DialWatchEndpoint(endpoint, append(opts, grpc.WithStatsHandler(otelgrpc.NewClientHandler()))...)
	if err != nil {
		return nil, nil, err
	}
	return client.WithWatchEndpoint(api, w), func() { _ = w.Close() }, nil
}
