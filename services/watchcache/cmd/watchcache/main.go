// Command watchcache is a NATS fan-out watch cache replica: it keeps every
// resource's state and recent history from the apiserver's JetStream stream
// and serves the apiserver's gRPC List and Watch to any number of watchers,
// so they do not add load to the apiserver or etcd. Clients write to the
// apiserver.
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"

	"podline.dev/pkg/client"
	"podline.dev/pkg/healthprobe"
	"podline.dev/pkg/telemetry"
	"podline.dev/services/watchcache/internal/replica"
)

func main() {
	var (
		natsURL   = flag.String("nats-url", "nats://127.0.0.1:4222", "NATS server holding the apiserver's watch stream")
		apiserver = flag.String("apiserver", "127.0.0.1:6444", "the apiserver's gRPC address (host:port), for lists and gap backfills")
		grpcAddr  = flag.String("grpc-address", "0.0.0.0:6444", "where to serve gRPC List and Watch")
		httpAddr  = flag.String("http-address", "0.0.0.0:8080", "where to serve /healthz, /readyz and /metrics")
		name      = flag.String("name", hostname(), "this replica's name in NATS and logs")
		otlp      = flag.String("otlp-endpoint", "", "OTLP/gRPC endpoint for spans (host:port)")
		creds     client.Credentials
		serving   servingFlags
	)
	creds.BindFlags(flag.CommandLine)
	serving.bind(flag.CommandLine)
	probe := healthprobe.Flag(flag.CommandLine)
	flag.Parse()
	healthprobe.Run(*probe)
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("replica", *name))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *natsURL, *apiserver, *grpcAddr, *httpAddr, *name, *otlp, creds, serving); err != nil {
		slog.Error("watchcache failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, natsURL, apiserver, grpcAddr, httpAddr, name, otlp string, creds client.Credentials, serving servingFlags) error {
	shutdown, err := telemetry.Setup(ctx, "watchcache", otlp)
	if err != nil {
		return err
	}
	defer func() { _ = shutdown(context.Background()) }()
	dialOpts, err := creds.DialOptions()
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(apiserver, append(dialOpts, grpc.WithStatsHandler(otelgrpc.NewClientHandler()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(client.MaxListBytes)))...)
	if err != nil {
		return err
	}
	defer conn.Close()
	serverOpts, access, err := serving.options()
	if err != nil {
		return err
	}
	if serving.clientCA == "" {
		slog.Warn("serving without client authentication: every client on the network may read every object through this replica")
	}
	r, err := replica.New(replica.Config{NATSURL: natsURL, Apiserver: conn, Name: name, ServerOptions: serverOpts, Access: access})
	if err != nil {
		return err
	}
	glis, err := net.Listen("tcp", grpcAddr)
	if err != nil {
		return err
	}
	hs := &http.Server{Addr: httpAddr, Handler: r.HTTPHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); _ = hs.Close() }()
	errc := make(chan error, 2)
	go func() { errc <- r.ServeGRPC(ctx, glis) }()
	go func() {
		if err := hs.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
	go r.Run(ctx)
	slog.Info("watchcache listening", "grpc", grpcAddr, "http", httpAddr, "nats", natsURL, "apiserver", apiserver)
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}
