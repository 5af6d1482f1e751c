// Command proxy is podline's node proxy, like kube-proxy in nftables mode:
// it watches Services and EndpointSlices through the apiserver (or the
// watchcache replicas) with the node's credentials and keeps the nftables
// table "ip podline-proxy" equal to them: ClusterIP and NodePort traffic
// DNATed to the ready endpoints, masquerade and hairpin, immediate refusal
// of Services without endpoints.
//
//	proxy --kubeconfig /etc/kubernetes/kubelet.conf --apiserver apiserver:6444 \
//	      --watch-endpoint watchcache:6444 --hostname-override worker-1 \
//	      --cluster-cidr 10.244.0.0/16
//
// Metrics are on --metrics-bind-address (/metrics), health on
// --healthz-bind-address (/healthz, /livez), spans go to --otlp-endpoint.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"sigs.k8s.io/knftables"

	"podline.dev/pkg/client"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/telemetry"
	"podline.dev/services/proxy/internal/proxier"
	"podline.dev/services/proxy/internal/rules"
)

type options struct {
	apiserver, watchEndpoint, hostname, clusterCIDR string
	nodePortAddresses, metricsAddr, healthzAddr     string
	otlp, logLevel                                  string
	creds                                           client.Credentials
	minSync, sync                                   time.Duration
	cleanup                                         bool
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	host, _ := os.Hostname()
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	o.creds.BindFlags(fs)
	fs.StringVar(&o.apiserver, "apiserver", "", "the apiserver's gRPC address host:port (default: the --kubeconfig server's host:port)")
	fs.StringVar(&o.watchEndpoint, "watch-endpoint", "", "watchcache replicas (host:port) for List and Watch; the rest goes to --apiserver")
	fs.StringVar(&o.hostname, "hostname-override", host, "this node's name")
	fs.StringVar(&o.clusterCIDR, "cluster-cidr", "", "the pods' range (10.244.0.0/16): traffic to a ClusterIP from outside it is masqueraded")
	fs.StringVar(&o.nodePortAddresses, "nodeport-addresses", "", "CIDRs whose local addresses NodePorts answer on, comma separated (default: every node address but loopback)")
	fs.DurationVar(&o.minSync, "min-sync-period", time.Second, "the least time between two syncs of the rules")
	fs.DurationVar(&o.sync, "sync-period", 30*time.Second, "the longest time between two full syncs of the rules")
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", "127.0.0.1:10249", "address of /metrics (empty: off)")
	fs.StringVar(&o.healthzAddr, "healthz-bind-address", "0.0.0.0:10256", "address of /healthz and /livez (empty: off)")
	fs.StringVar(&o.otlp, "otlp-endpoint", "", telemetry.EndpointFlagUsage)
	fs.BoolVar(&o.cleanup, "cleanup", false, "delete the table ip "+rules.Table+" and exit")
	fs.StringVar(&o.logLevel, "v", "info", "log level: debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if o.hostname == "" {
		return nil, errors.New("--hostname-override is required")
	}
	if o.minSync <= 0 || o.sync < o.minSync {
		return nil, fmt.Errorf("--sync-period (%s) must be at least --min-sync-period (%s), which must be positive", o.sync, o.minSync)
	}
	if o.apiserver == "" && !o.cleanup {
		if o.creds.Kubeconfig == "" {
			return nil, errors.New("--apiserver or --kubeconfig is required")
		}
		addr, err := kubeconfigServer(o.creds.Kubeconfig)
		if err != nil {
			return nil, err
		}
		o.apiserver = addr
	}
	return o, nil
}

// kubeconfigServer is the host:port of the kubeconfig's (single) cluster
// server; the apiserver answers gRPC on its REST port too.
func kubeconfigServer(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == "server" {
			u, err := url.Parse(strings.Trim(strings.TrimSpace(v), `"'`))
			if err != nil || u.Host == "" {
				return "", fmt.Errorf("%s: server %q: want https://host:port", path, v)
			}
			return u.Host, nil
		}
	}
	return "", fmt.Errorf("%s: no cluster server", path)
}

// nodePortIPs are the local IPv4 addresses inside cidrs; nil (every local
// address) when cidrs is empty.
func nodePortIPs(cidrs string, log *slog.Logger) func() rules.NodeInfo {
	var prefixes []netip.Prefix
	for _, c := range strings.Split(cidrs, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		p, err := netip.ParsePrefix(c)
		if err != nil {
			log.Error("--nodeport-addresses", "cidr", c, "err", err)
			continue
		}
		prefixes = append(prefixes, p)
	}
	return func() rules.NodeInfo {
		if len(prefixes) == 0 {
			return rules.NodeInfo{}
		}
		ips := []string{}
		addrs, err := net.InterfaceAddrs()
		if err != nil {
			log.Error("node addresses", "err", err)
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(n.IP)
			if !ok || !ip.Unmap().Is4() {
				continue
			}
			for _, p := range prefixes {
				if p.Contains(ip.Unmap()) {
					ips = append(ips, ip.Unmap().String())
					break
				}
			}
		}
		return rules.NodeInfo{NodePortIPs: ips}
	}
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "proxy:", err)
		os.Exit(2)
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(o.logLevel))
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, o, log); err != nil {
		log.Error("proxy", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o *options, log *slog.Logger) error {
	nft, err := knftables.New(knftables.IPv4Family, rules.Table, knftables.UseNetlink)
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	if o.cleanup {
		tx := nft.NewTransaction()
		tx.Destroy(&knftables.Table{})
		return nft.Run(ctx, tx)
	}
	shutdown, err := telemetry.Setup(ctx, "proxy", o.otlp)
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = shutdown(sctx)
	}()

	conn, closeConn, err := dial(o)
	if err != nil {
		return err
	}
	defer closeConn()

	nodeFn := nodePortIPs(o.nodePortAddresses, log)
	node := func() rules.NodeInfo {
		n := nodeFn()
		n.ClusterCIDR = o.clusterCIDR
		return n
	}
	metrics := proxier.NewMetrics()
	src := proxier.NewInformers(conn, log)
	p := proxier.New(proxier.Config{NodeName: o.hostname, Node: node, MinSyncPeriod: o.minSync, SyncPeriod: o.sync},
		nft, src, clock.Real{}, log, metrics)
	if err := src.Notify(p); err != nil {
		return err
	}
	serve(ctx, o.metricsAddr, metrics.Handler(), log)
	serve(ctx, o.healthzAddr, p.HealthzHandler(), log)

	go src.Run(ctx)
	if !src.WaitForCacheSync(ctx) {
		return ctx.Err()
	}
	log.Info("proxy starting", "node", o.hostname, "apiserver", o.apiserver, "table", "ip "+rules.Table,
		"clusterCIDR", o.clusterCIDR, "minSyncPeriod", o.minSync, "syncPeriod", o.sync)
	p.Run(ctx)
	return nil
}

// dial connects to the apiserver as the kubelet does: gRPC with the
// node's credentials, List and Watch to the watchcache replicas when
// --watch-endpoint names them.
func dial(o *options) (grpc.ClientConnInterface, func(), error) {
	opts, err := o.creds.DialOptions()
	if err != nil {
		return nil, nil, err
	}
	opts = append(opts, grpc.WithStatsHandler(otelgrpc.NewClientHandler()))
	api, err := grpc.NewClient(o.apiserver, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("apiserver %s: %w", o.apiserver, err)
	}
	if o.watchEndpoint == "" {
		return api, func() { _ = api.Close() }, nil
	}
	w, err := client.DialWatchEndpoint(o.watchEndpoint, opts...)
	if err != nil {
		_ = api.Close()
		return nil, nil, fmt.Errorf("watch endpoint %s: %w", o.watchEndpoint, err)
	}
	return client.WithWatchEndpoint(api, w), func() { _ = w.Close(); _ = api.Close() }, nil
}

func serve(ctx context.Context, addr string, h http.Handler, log *slog.Logger) {
	if addr == "" {
		return
	}
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server", "addr", addr, "err", err)
		}
	}()
}
