// Command scheduler is podline's kube-scheduler: it watches pending Pods
// whose schedulerName is one of its profiles ("" means default-scheduler),
// picks a node for each with the scheduling framework and binds it, behind
// leader election on the Lease kube-system/kube-scheduler.
//
//	scheduler --apiserver apiserver:6443 --config /etc/podline/scheduler.yaml \
//	          --otlp-endpoint jaeger:4317 --metrics-addr :10251
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"podline.dev/pkg/client"
	"podline.dev/pkg/client/leaderelection"
	"podline.dev/pkg/healthprobe"
	"podline.dev/pkg/telemetry"
	"podline.dev/services/scheduler/internal/app"
	"podline.dev/services/scheduler/internal/metrics"
	"podline.dev/services/scheduler/internal/profile"
)

type flags struct {
	apiserver     string
	watchEndpoint string
	leaderElect   bool
	lockNamespace string
	lockName      string
	leaseDuration time.Duration
	renewDeadline time.Duration
	retryPeriod   time.Duration
	config        string
	otlp          string
	metricsAddr   string
	logLevel      string
	creds         client.Credentials
}

func main() {
	var f flags
	flag.StringVar(&f.apiserver, "apiserver", "127.0.0.1:6443", "apiserver gRPC address (host:port)")
	flag.StringVar(&f.watchEndpoint, "watch-endpoint", "", "watchcache replicas (host:port; every address the name resolves to) for List and Watch; writes, and reads the replicas cannot take, go to --apiserver")
	flag.BoolVar(&f.leaderElect, "leader-elect", true, "schedule only while holding the Lease <lock-namespace>/<lock-name>")
	flag.StringVar(&f.lockNamespace, "lock-namespace", "kube-system", "namespace of the leader election Lease")
	flag.StringVar(&f.lockName, "leader-elect-resource-name", "kube-scheduler", "name of the leader election Lease")
	flag.DurationVar(&f.leaseDuration, "leader-elect-lease-duration", leaderelection.DefaultLeaseDuration, "how long a non-leader waits before taking a Lease that is not renewed")
	flag.DurationVar(&f.renewDeadline, "leader-elect-renew-deadline", leaderelection.DefaultRenewDeadline, "how long the leader tries to renew before giving up")
	flag.DurationVar(&f.retryPeriod, "leader-elect-retry-period", leaderelection.DefaultRetryPeriod, "wait between attempts to take or renew the Lease")
	flag.StringVar(&f.config, "config", "", "KubeSchedulerConfiguration file (profiles, plugins, weights); empty runs the default profile")
	flag.StringVar(&f.otlp, "otlp-endpoint", "", "OTLP/gRPC endpoint for spans (host:port); empty uses $OTEL_EXPORTER_OTLP_ENDPOINT")
	flag.StringVar(&f.metricsAddr, "metrics-addr", ":10251", "address of the /metrics and /healthz endpoint; empty disables it")
	flag.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	f.creds.BindFlags(flag.CommandLine)
	probe := healthprobe.Flag(flag.CommandLine)
	flag.Parse()
	healthprobe.Run(*probe)

	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		fmt.Fprintln(os.Stderr, "scheduler: bad --log-level:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, f, log); err != nil && !errors.Is(err, context.Canceled) {
		log.Error("scheduler stopped", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, f flags, log *slog.Logger) error {
	cfg := profile.Default()
	if f.config != "" {
		var err error
		if cfg, err = profile.Load(f.config); err != nil {
			return err
		}
	}
	shutdown, err := telemetry.Setup(ctx, "scheduler", f.otlp)
	if err != nil {
		return err
	}
	defer func() { _ = shutdown(context.Background()) }()

	tc, err := f.creds.TransportCredentials()
	if err != nil {
		return err
	}
	conn, err := dial(f.apiserver, tc)
	if err != nil {
		return err
	}
	defer conn.Close()
	var api grpc.ClientConnInterface = conn
	if f.watchEndpoint != "" {
		wconn, err := client.DialWatchEndpoint(f.watchEndpoint, grpc.WithTransportCredentials(tc),
			grpc.WithStatsHandler(otelgrpc.NewClientHandler()))
		if err != nil {
			return err
		}
		defer wconn.Close()
		api = client.WithWatchEndpoint(conn, wconn)
	}

	m := metrics.New()
	if f.metricsAddr != "" {
		srv, err := serveMetrics(f.metricsAddr, m)
		if err != nil {
			return err
		}
		defer srv.Close()
	}
	log.Info("scheduler starting", "apiserver", f.apiserver, "leaderElect", f.leaderElect,
		"lock", f.lockNamespace+"/"+f.lockName, "profiles", len(cfg.Profiles))
	return app.Run(ctx, app.Config{
		Conn:          api,
		Profile:       cfg,
		Metrics:       m,
		Logger:        log,
		LeaderElect:   f.leaderElect,
		LockNamespace: f.lockNamespace,
		LockName:      f.lockName,
		LeaseDuration: f.leaseDuration,
		RenewDeadline: f.renewDeadline,
		RetryPeriod:   f.retryPeriod,
	})
}

// dial connects to the apiserver with creds: TLS with the scheduler's
// client certificate and the cluster CA (--kubeconfig), or plain gRPC
// without them. The stats handler carries each attempt's span to the
// apiserver.
func dial(addr string, creds credentials.TransportCredentials) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr,
		grpc.WithTransportCredentials(creds),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler()),
	)
}

func serveMetrics(addr string, m *metrics.Metrics) (*http.Server, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	return srv, nil
}
