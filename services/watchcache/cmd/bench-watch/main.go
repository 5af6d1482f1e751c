// Command bench-watch measures watch fan-out, directly on the apiserver
// against through two watchcache replicas, in one run on one machine, and
// prints the figures: for N watchers on Pods while writes go in at a fixed
// rate, the p50 and p99 delay from a write's send to each watcher's event,
// the apiserver's CPU during the writes, etcd's watcher count, and the
// resident memory each watcher costs the processes that serve it.
//
// etcd, nats-server, the apiserver (with --nats-url) and the replicas run
// as separate processes from binaries (see mk/watchcache.mk), so CPU and
// memory are theirs; the watchers and the writer run here. Each watcher
// selects the pods of one of -nodes nodes (spec.nodeName), as kubelets do;
// -nodes 1 makes every watcher see every write. Everything is on loopback
// and bounded in count and time.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

type config struct {
	etcd, nats, apiserver, watchcache string
	watchers                          []int
	rate, seconds, nodes, conns       int
}

func main() {
	var cfg config
	var counts string
	flag.StringVar(&cfg.etcd, "etcd", "bin/etcd", "etcd binary")
	flag.StringVar(&cfg.nats, "nats", "bin/nats-server", "nats-server binary")
	flag.StringVar(&cfg.apiserver, "apiserver", ".cache/bench-watch/apiserver", "apiserver binary")
	flag.StringVar(&cfg.watchcache, "watchcache", ".cache/bench-watch/watchcache", "watchcache binary")
	flag.StringVar(&counts, "watchers", "100,1000,10000", "watcher counts to run, comma-separated")
	flag.IntVar(&cfg.rate, "rate", 200, "pod creates per second")
	flag.IntVar(&cfg.seconds, "seconds", 5, "length of each write phase")
	flag.IntVar(&cfg.nodes, "nodes", 100, "nodes the pods and watchers spread over (1: every watcher sees every write)")
	flag.IntVar(&cfg.conns, "conns", 16, "gRPC connections the watchers share, per server")
	flag.Parse()
	for _, c := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bench-watch: bad -watchers %q\n", counts)
			os.Exit(2)
		}
		cfg.watchers = append(cfg.watchers, n)
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench-watch:", err)
		os.Exit(1)
	}
}

// cluster is what one bench run starts.
type cluster struct {
	etcd, nats, api *proc
	replicas        []*proc
	etcdURL         string
	apiAddr         string
	replicaAddrs    []string
}

func startCluster(ctx context.Context, cfg config) (*cluster, func(), error) {
	c := &cluster{}
	var procs []*proc
	stop := func() {
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].stop()
		}
	}
	dir, err := os.MkdirTemp("", "bench-watch")
	if err != nil {
		return nil, nil, err
	}
	cport, pport := freePort(), freePort()
	c.etcdURL = fmt.Sprintf("http://127.0.0.1:%d", cport)
	purl := fmt.Sprintf("http://127.0.0.1:%d", pport)
	if c.etcd, err = start(ctx, "etcd", cfg.etcd, "--data-dir", dir+"/etcd", "--log-level", "error",
		"--listen-client-urls", c.etcdURL, "--advertise-client-urls", c.etcdURL,
		"--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl, "--initial-cluster", "default="+purl); err != nil {
		return nil, nil, err
	}
	procs = append(procs, c.etcd)
	natsPort := freePort()
	if c.nats, err = start(ctx, "nats", cfg.nats, "-js", "-sd", dir+"/nats", "-a", "127.0.0.1", "-p", strconv.Itoa(natsPort)); err != nil {
		stop()
		return nil, nil, err
	}
	procs = append(procs, c.nats)
	natsURL := fmt.Sprintf("nats://127.0.0.1:%d", natsPort)
	if err := waitHTTP(ctx, c.etcdURL+"/health", 20*time.Second); err != nil {
		stop()
		return nil, nil, err
	}
	gport := freePort()
	c.apiAddr = fmt.Sprintf("127.0.0.1:%d", gport)
	if c.api, err = start(ctx, "apiserver", cfg.apiserver, "--etcd-servers", c.etcdURL, "--bind-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(freePort()), "--grpc-port", strconv.Itoa(gport), "--nats-url", natsURL,
		"--etcd-compaction-interval", "0"); err != nil {
		stop()
		return nil, nil, err
	}
	procs = append(procs, c.api)
	for i := range 2 {
		addr, httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort()), fmt.Sprintf("127.0.0.1:%d", freePort())
		r, err := start(ctx, fmt.Sprintf("watchcache-%d", i+1), cfg.watchcache, "--nats-url", natsURL, "--apiserver", c.apiAddr,
			"--grpc-address", addr, "--http-address", httpAddr, "--metrics-address", fmt.Sprintf("127.0.0.1:%d", freePort()),
			"--name", fmt.Sprintf("bench-%d", i+1))
		if err != nil {
			stop()
			return nil, nil, err
		}
		procs = append(procs, r)
		c.replicas = append(c.replicas, r)
		c.replicaAddrs = append(c.replicaAddrs, addr)
		if err := waitHTTP(ctx, "http://"+httpAddr+"/readyz", 60*time.Second); err != nil {
			stop()
			return nil, nil, err
		}
	}
	return c, func() { stop(); _ = os.RemoveAll(dir) }, nil
}

func run(cfg config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c, stop, err := startCluster(ctx, cfg)
	if err != nil {
		return err
	}
	defer stop()
	apiConns, err := dial(c.apiAddr, cfg.conns)
	if err != nil {
		return err
	}
	var replicaConns []*grpc.ClientConn
	for _, a := range c.replicaAddrs {
		cs, err := dial(a, cfg.conns/2)
		if err != nil {
			return err
		}
		replicaConns = append(replicaConns, cs...)
	}
	writer := client.Pods(apiConns[0])
	// The ServiceAccount admission refuses pods whose namespace lacks its
	// "default" account, which the controller-manager would make.
	sa := &corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Name: "default", Namespace: "default"}}
	if _, err := client.ServiceAccounts(apiConns[0]).Create(ctx, sa); err != nil {
		return err
	}

	fmt.Printf("bench-watch: %d pod creates/s for %ds; each watcher selects spec.nodeName over %d nodes; direct = apiserver, cache = 2 watchcache replicas\n",
		cfg.rate, cfg.seconds, cfg.nodes)
	fmt.Printf("%-6s %7s %13s %9s %9s %13s %13s %6s %11s\n",
		"mode", "watchers", "events", "p50", "p99", "apiserver CPU", "replicas CPU", "etcd-w", "mem/watcher")
	for round, n := range cfg.watchers {
		for _, mode := range []string{"direct", "cache"} {
			conns, servers := apiConns, []*proc{c.api}
			if mode == "cache" {
				conns, servers = replicaConns, c.replicas
			}
			r, err := measure(ctx, cfg, c, writer, conns, servers, n, fmt.Sprintf("b%d%s", round, mode[:1]))
			if err != nil {
				return fmt.Errorf("%s with %d watchers: %w", mode, n, err)
			}
			fmt.Printf("%-6s %7d %6d/%-6d %9s %9s %6.2fs %4.0f%% %6.2fs %4.0f%% %6.0f %8.1f KiB\n",
				mode, n, r.delivered, r.expected, r.p50.Round(100*time.Microsecond), r.p99.Round(100*time.Microsecond),
				r.apiCPU.Seconds(), 100*r.apiCPU.Seconds()/r.window.Seconds(),
				r.replicaCPU.Seconds(), 100*r.replicaCPU.Seconds()/r.window.Seconds(),
				r.etcdWatchers, r.memPerWatcher/1024)
		}
	}
	return nil
}

func dial(addr string, n int) ([]*grpc.ClientConn, error) {
	out := make([]*grpc.ClientConn, max(n, 1))
	for i := range out {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}
