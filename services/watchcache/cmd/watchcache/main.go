// Command watchcache is a NATS fan-out watch cache replica: it keeps every
// resource's state and recent history from the apiserver's JetStream stream
// and serves the apiserver's gRPC List and Watch to any number of watchers,
// so they do not add load to the apiserver or etcd. Clients write to the
// apiserver.
package main

import (
	"context"
	"crypto/tls"
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
		httpAddr  = flag.String("http-address", "", "where to serve /healthz, /livez and /readyz in plain HTTP (for a container healthcheck; none when empty)")
		metrics   = flag.String("metrics-address", "127.0.0.1:10260", "where to serve /metrics and /debug/pprof/ (and the health paths): HTTPS with --tls-cert-file, to clients the apiserver authorizes when --client-ca-file is set; else plain HTTP, on loopback only")
		name      = flag.String("name", hostname(), "this replica's name in NATS and logs")
		otlp      = flag.String("otlp-endpoint", "", telemetry.EndpointFlagUsage)
		creds     client.Credentials
		serving   servingFlags
		natsTLS   natsTLSFlags
	)
	creds.BindFlags(flag.CommandLine)
	serving.bind(flag.CommandLine)
	natsTLS.bind(flag.CommandLine)
	probe := healthprobe.Flag(flag.CommandLine)
	flag.Parse()
	healthprobe.Run(*probe)
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("replica", *name))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	addrs := addresses{grpc: *grpcAddr, http: *httpAddr, metrics: *metrics}
	if err := run(ctx, *natsURL, natsTLS, *apiserver, addrs, *name, *otlp, creds, serving); err != nil {
		slog.Error("watchcache failed", "err", err)
		os.Exit(1)
	}
}

// addresses are where the replica listens.
type addresses struct{ grpc, http, metrics string }

func run(ctx context.Context, natsURL string, natsTLS natsTLSFlags, apiserver string, addrs addresses, name, otlp string, creds client.Credentials, flags servingFlags) error {
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
	srv, err := flags.options(creds)
	if err != nil {
		return err
	}
	if flags.clientCA == "" {
		slog.Warn("serving without client authentication: every client on the network may read every object through this replica")
	}
	if srv.metricsTLS == nil {
		if err := checkPlainMetrics(addrs.metrics); err != nil {
			return err
		}
	}
	natsCfg, err := natsTLS.config()
	if err != nil {
		return err
	}
	r, err := replica.New(replica.Config{NATSURL: natsURL, NATSTLS: natsCfg, Apiserver: conn, Name: name, ServerOptions: srv.grpcOpts, Authorizer: srv.authorizer})
	if err != nil {
		return err
	}
	glis, err := net.Listen("tcp", addrs.grpc)
	if err != nil {
		return err
	}
	mlis, err := net.Listen("tcp", addrs.metrics)
	if err != nil {
		return err
	}
	if srv.metricsTLS != nil {
		mlis = tls.NewListener(mlis, srv.metricsTLS)
	}
	servers := []*http.Server{{Handler: srv.metricsHandler(r), ReadHeaderTimeout: 10 * time.Second}}
	listeners := []net.Listener{mlis}
	if addrs.http != "" {
		hlis, err := net.Listen("tcp", addrs.http)
		if err != nil {
			return err
		}
		servers = append(servers, &http.Server{Handler: r.HealthHandler(), ReadHeaderTimeout: 10 * time.Second})
		listeners = append(listeners, hlis)
	}
	errc := make(chan error, 1+len(servers))
	go func() { errc <- r.ServeGRPC(ctx, glis) }()
	for i, hs := range servers {
		go func() { <-ctx.Done(); _ = hs.Close() }()
		go func() {
			if err := hs.Serve(listeners[i]); !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	go r.Run(ctx)
	slog.Info("watchcache listening", "grpc", addrs.grpc, "http", addrs.http, "metrics", addrs.metrics, "nats", natsURL, "apiserver", apiserver)
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
