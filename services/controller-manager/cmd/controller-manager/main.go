// Command controller-manager runs podline's controllers (deployment,
// replicaset, garbagecollector, endpointslice, endpoints, nodelifecycle,
// namespace, serviceaccount, root-ca-cert-publisher, resourcequota) against
// the apiserver, behind leader election on the Lease
// kube-system/kube-controller-manager.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"

	"podline.dev/pkg/client"
	"podline.dev/pkg/client/leaderelection"
	"podline.dev/pkg/healthprobe"
	"podline.dev/pkg/secureserving"
	"podline.dev/pkg/telemetry"
	"podline.dev/services/controller-manager/internal/app"
	"podline.dev/services/controller-manager/internal/controller"
	"podline.dev/services/controller-manager/internal/controller/deployment"
	"podline.dev/services/controller-manager/internal/controller/endpoints"
	"podline.dev/services/controller-manager/internal/controller/endpointslice"
	"podline.dev/services/controller-manager/internal/controller/garbagecollector"
	"podline.dev/services/controller-manager/internal/controller/namespace"
	"podline.dev/services/controller-manager/internal/controller/nodelifecycle"
	"podline.dev/services/controller-manager/internal/controller/replicaset"
	"podline.dev/services/controller-manager/internal/controller/resourcequota"
)

func main() {
	defaults := controller.DefaultOptions()
	workers := app.DefaultWorkers()
	var (
		apiserver     = flag.String("apiserver", "127.0.0.1:6443", "apiserver gRPC address (host:port)")
		watchEndpoint = flag.String("watch-endpoint", "", "watchcache replicas (host:port; every address the name resolves to) for List and Watch; writes, and reads the replicas cannot take, go to --apiserver")
		leaderElect   = flag.Bool("leader-elect", true, "run only while holding the Lease kube-system/kube-controller-manager")
		leaseDuration = flag.Duration("leader-elect-lease-duration", leaderelection.DefaultLeaseDuration, "how long a non-leader waits before taking a Lease that is not renewed")
		renewDeadline = flag.Duration("leader-elect-renew-deadline", leaderelection.DefaultRenewDeadline, "how long the leader tries to renew before giving up")
		retryPeriod   = flag.Duration("leader-elect-retry-period", leaderelection.DefaultRetryPeriod, "wait between attempts to take or renew the Lease")
		otlp          = flag.String("otlp-endpoint", "", telemetry.EndpointFlagUsage)
		controllers   = flag.String("controllers", "*", "controllers to run: '*' for all, 'name' to enable, '-name' to disable; known: "+strings.Join(app.Names(), ", "))
		rootCAFile    = flag.String("root-ca-file", "", "cluster CA bundle (PEM) published as the kube-root-ca.crt ConfigMap in every namespace; empty leaves root-ca-cert-publisher off")
		opts          = defaults
	)
	flag.DurationVar(&opts.NodeMonitorGracePeriod, "node-monitor-grace-period", defaults.NodeMonitorGracePeriod, "how long a node may go without renewing its Lease before it is marked Unknown")
	flag.DurationVar(&opts.NodeMonitorPeriod, "node-monitor-period", defaults.NodeMonitorPeriod, "how often node health is checked")
	flag.DurationVar(&opts.NodeStartupGracePeriod, "node-startup-grace-period", defaults.NodeStartupGracePeriod, "grace of a node that never reported")
	flag.DurationVar(&opts.NamespaceRetryPeriod, "namespace-retry-period", defaults.NamespaceRetryPeriod, "how soon a terminating namespace with content left is looked at again")
	flag.DurationVar(&opts.ResourceQuotaSyncPeriod, "resource-quota-sync-period", defaults.ResourceQuotaSyncPeriod, "how often every ResourceQuota's usage is recomputed in full")
	concurrency := map[string]*int{}
	for name, flagName := range map[string]string{
		deployment.Name:       "concurrent-deployment-syncs",
		replicaset.Name:       "concurrent-replicaset-syncs",
		garbagecollector.Name: "concurrent-gc-syncs",
		endpointslice.Name:    "concurrent-service-endpoint-syncs",
		endpoints.Name:        "concurrent-endpoint-syncs",
		namespace.Name:        "concurrent-namespace-syncs",
		nodelifecycle.Name:    "concurrent-node-eviction-syncs",
		resourcequota.Name:    "concurrent-resource-quota-syncs",
	} {
		concurrency[name] = flag.Int(flagName, workers[name], fmt.Sprintf("workers of the %s controller", name))
	}
	var creds client.Credentials
	creds.BindFlags(flag.CommandLine)
	healthzAddr := flag.String("healthz-addr", "127.0.0.1:10257", "loopback host:port of the plain HTTP /healthz (the container healthcheck); empty disables it")
	probe := healthprobe.Flag(flag.CommandLine)
	flag.Parse()
	healthprobe.Run(*probe)
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	if *healthzAddr != "" {
		// Plain HTTP is for the healthcheck beside the process only.
		if err := secureserving.RequireLoopback(*healthzAddr); err != nil {
			slog.Error("--healthz-addr", "err", err)
			os.Exit(2)
		}
		go serveHealthz(*healthzAddr)
	}
	for name, n := range concurrency {
		workers[name] = *n
	}
	if *rootCAFile != "" {
		ca, err := os.ReadFile(*rootCAFile)
		if err != nil {
			slog.Error("reading --root-ca-file", "err", err)
			os.Exit(1)
		}
		opts.RootCA = string(ca)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := run(ctx, *apiserver, *watchEndpoint, creds, *otlp, app.Config{
		Controllers:   strings.Split(*controllers, ","),
		Workers:       workers,
		Options:       opts,
		LeaderElect:   *leaderElect,
		LeaseDuration: *leaseDuration,
		RenewDeadline: *renewDeadline,
		RetryPeriod:   *retryPeriod,
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		slog.Error("controller-manager stopped", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, apiserver, watchEndpoint string, creds client.Credentials, otlp string, cfg app.Config) error {
	shutdown, err := telemetry.Setup(ctx, "controller-manager", otlp)
	if err != nil {
		return err
	}
	defer func() { _ = shutdown(context.Background()) }()
	dialOpts, err := creds.DialOptions()
	if err != nil {
		return err
	}
	conn, err := app.Dial(apiserver, dialOpts...)
	if err != nil {
		return err
	}
	defer conn.Close()
	cfg.Conn = conn
	if watchEndpoint != "" {
		wconn, err := client.DialWatchEndpoint(watchEndpoint, append(dialOpts, grpc.WithStatsHandler(otelgrpc.NewClientHandler()))...)
		if err != nil {
			return err
		}
		defer wconn.Close()
		cfg.Conn = client.WithWatchEndpoint(conn, wconn)
	}
	slog.Info("controller-manager starting", "apiserver", apiserver, "leaderElect", cfg.LeaderElect)
	return app.Run(ctx, cfg)
}

// serveHealthz answers /healthz with ok while the process runs; leader
// election decides whether its controllers act.
func serveHealthz(addr string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		slog.Error("healthz server", "addr", addr, "err", err)
	}
}
