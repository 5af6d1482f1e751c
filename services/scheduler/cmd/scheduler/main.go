// Command scheduler is podline's kube-scheduler: it watches pending Pods
// whose schedulerName is one of its profiles ("" means default-scheduler),
// picks a node for each with the scheduling framework and binds it, behind
// leader election on the Lease kube-system/kube-scheduler.
//
// It serves /metrics and the health paths on its secure port, as
// kube-scheduler does: HTTPS on --secure-port (10259), /metrics to
// clients the apiserver authorizes (system:monitoring, system:masters),
// authenticated by a client certificate of --client-ca-file or a bearer
// token; the apiserver is reached for both reviews with --kubeconfig
// (or --authentication-kubeconfig, --authorization-kubeconfig).
// --healthz-bind-address serves the health paths alone in plain HTTP, on
// loopback only, for a container healthcheck.
//
//	scheduler --apiserver apiserver:6444 --kubeconfig /etc/kubernetes/scheduler.conf \
//	          --tls-cert-file serving.crt --tls-private-key-file serving.key \
//	          --client-ca-file ca.crt --otlp-endpoint https://jaeger:4317
package main

import (
	"context"
	"crypto/tls"
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
	"podline.dev/pkg/secureserving"
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
	healthzAddr   string
	logLevel      string
	creds         client.Credentials
	secure        secureserving.Options
}

func main() {
	var f flags
	f.bind(flag.CommandLine)
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

// securePort is kube-scheduler's secure port.
const securePort = 10259

func (f *flags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.apiserver, "apiserver", "127.0.0.1:6443", "apiserver gRPC address (host:port)")
	fs.StringVar(&f.watchEndpoint, "watch-endpoint", "", "watchcache replicas (host:port; every address the name resolves to) for List and Watch; writes, and reads the replicas cannot take, go to --apiserver")
	fs.BoolVar(&f.leaderElect, "leader-elect", true, "schedule only while holding the Lease <lock-namespace>/<lock-name>")
	fs.StringVar(&f.lockNamespace, "lock-namespace", "kube-system", "namespace of the leader election Lease")
	fs.StringVar(&f.lockName, "leader-elect-resource-name", "kube-scheduler", "name of the leader election Lease")
	fs.DurationVar(&f.leaseDuration, "leader-elect-lease-duration", leaderelection.DefaultLeaseDuration, "how long a non-leader waits before taking a Lease that is not renewed")
	fs.DurationVar(&f.renewDeadline, "leader-elect-renew-deadline", leaderelection.DefaultRenewDeadline, "how long the leader tries to renew before giving up")
	fs.DurationVar(&f.retryPeriod, "leader-elect-retry-period", leaderelection.DefaultRetryPeriod, "wait between attempts to take or renew the Lease")
	fs.StringVar(&f.config, "config", "", "KubeSchedulerConfiguration file (profiles, plugins, weights); empty runs the default profile")
	fs.StringVar(&f.otlp, "otlp-endpoint", "", telemetry.EndpointFlagUsage)
	fs.StringVar(&f.healthzAddr, "healthz-bind-address", "", "host:port on loopback where /healthz, /livez and /readyz are also served in plain HTTP, for a container healthcheck; empty: none")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	f.creds.BindFlags(fs)
	f.secure.BindFlags(fs, securePort)
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
	if err := serve(ctx, f, m, log); err != nil {
		return err
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

// serve starts the secure port (/metrics and the health paths) and the
// plain health port the flags ask for, until ctx ends. It fails when one
// cannot start: no serving certificate, a plain port off loopback, an
// address taken.
func serve(ctx context.Context, f flags, m *metrics.Metrics, log *slog.Logger) error {
	health := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }
	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		health.HandleFunc(p, ok)
	}
	type port struct {
		lis net.Listener
		h   http.Handler
	}
	var ports []port
	if f.secure.Enabled() {
		tlsCfg, cfg, err := f.secure.Config(f.creds.Kubeconfig)
		if err != nil {
			return err
		}
		lis, err := net.Listen("tcp", f.secure.Address())
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.Handle("/", health)
		mux.Handle("/metrics", m.Handler())
		cfg.Log = log
		ports = append(ports, port{tls.NewListener(lis, tlsCfg), cfg.Handler(mux)})
	}
	if f.healthzAddr != "" {
		if err := secureserving.RequireLoopback(f.healthzAddr); err != nil {
			return fmt.Errorf("--healthz-bind-address: %w", err)
		}
		lis, err := net.Listen("tcp", f.healthzAddr)
		if err != nil {
			return err
		}
		ports = append(ports, port{lis, health})
	}
	for _, p := range ports {
		log.Info("scheduler serving", "addr", p.lis.Addr().String())
		go func() {
			if err := secureserving.Serve(ctx, p.lis, p.h); err != nil {
				log.Error("scheduler serving", "addr", p.lis.Addr().String(), "err", err)
			}
		}()
	}
	return nil
}
