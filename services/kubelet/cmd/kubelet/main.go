// Command kubelet is podline's node agent: it registers its Node, keeps
// the node's Lease and status current, and runs the pods bound to it (and
// the static pods in its manifest directory) on a CRI runtime.
//
//	kubelet --apiserver apiserver:6443 --node-name worker-1 --pod-cidr 10.244.1.0/24
//
// It talks to the apiserver over gRPC (see dial.go) and to the container
// runtime only over CRI (--container-runtime-endpoint: podline-cri, or
// containerd's own CRI plugin), which runs the sandboxes, calls CNI and
// writes the container logs under --pod-logs-dir. It serves logs and exec over HTTPS on --port (--tls-cert-file), to clients
// whose certificate --client-ca-file verifies (or whose bearer token the
// apiserver vouches for, --authentication-token-webhook) and whom --authorization-mode
// allows (Webhook: SubjectAccessReviews to the apiserver), and /healthz in
// plain HTTP on --healthz-bind-address:--healthz-port. The Pods'
// ServiceAccount tokens come from the --kubeconfig apiserver's
// TokenRequest API (internal/token).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path"
	goruntime "runtime"
	"strings"
	"syscall"
	"time"

	"podline.dev/pkg/client"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/telemetry"
	"podline.dev/services/kubelet/internal/kubelet"
	"podline.dev/services/kubelet/internal/nodestatus"
	"podline.dev/services/kubelet/internal/poddns"
	"podline.dev/services/kubelet/internal/resource"
	"podline.dev/services/kubelet/internal/runtime/cri"
	"podline.dev/services/kubelet/internal/server"
)

var _ server.Pods = (*kubelet.Kubelet)(nil)

type options struct {
	apiserver, nodeName, podCIDR, nodeIP, taints, labels     string
	runtimeEndpoint, imageEndpoint, podLogsDir, resolvConf   string
	clusterDNS, clusterDomain                                string
	staticPodPath, otlp, rootDir                             string
	watchEndpoint                                            string
	cgroupRoot, address, tlsCert, tlsKey, capacity, reserved string
	port, healthzPort                                        int
	healthzAddress                                           string
	serverAuth                                               serverAuthFlags
	creds                                                    client.Credentials
	syncFrequency, relistPeriod, statusUpdate, leaseRenew    time.Duration
	crashLoopMax                                             time.Duration
	logLevel                                                 string
}

func parseFlags(args []string) (*options, error) {
	o := &options{}
	host, _ := os.Hostname()
	fs := flag.NewFlagSet("kubelet", flag.ContinueOnError)
	fs.StringVar(&o.apiserver, "apiserver", "127.0.0.1:6443", "the apiserver's gRPC address: host:port, or unix:///path")
	fs.StringVar(&o.watchEndpoint, "watch-endpoint", "", "watchcache replicas (host:port; every address the name resolves to) for List and Watch; writes, and reads the replicas cannot take, go to --apiserver")
	o.creds.BindFlags(fs)
	fs.StringVar(&o.nodeName, "node-name", host, "this node's name")
	fs.StringVar(&o.podCIDR, "pod-cidr", "", "this node's pod subnet (else the Node's spec.podCIDR)")
	fs.StringVar(&o.nodeIP, "node-ip", "", "this node's IP (default: the first global IPv4 address)")
	fs.StringVar(&o.taints, "register-with-taints", "", "taints to register the Node with: key[=value]:Effect,...")
	fs.StringVar(&o.labels, "node-labels", "", "labels to register the Node with: key=value,...")
	fs.StringVar(&o.runtimeEndpoint, "container-runtime-endpoint", cri.DefaultEndpoint, "the CRI runtime service's socket (unix:///path)")
	fs.StringVar(&o.imageEndpoint, "image-service-endpoint", "", "the CRI image service's socket (default: --container-runtime-endpoint)")
	fs.StringVar(&o.clusterDNS, "cluster-dns", "", "the cluster DNS servers' IPs, comma separated, for ClusterFirst pods")
	fs.StringVar(&o.clusterDomain, "cluster-domain", "cluster.local", "the cluster's DNS domain")
	fs.StringVar(&o.resolvConf, "resolv-conf", "/etc/resolv.conf", "the node's resolver configuration for Default pods (empty: none)")
	fs.StringVar(&o.podLogsDir, "pod-logs-dir", "/var/log/pods", "where the runtime writes the containers' logs")
	fs.StringVar(&o.staticPodPath, "static-pod-path", "/etc/kubernetes/manifests", "static pod manifests (empty: none)")
	fs.StringVar(&o.otlp, "otlp-endpoint", "", telemetry.EndpointFlagUsage)
	fs.StringVar(&o.rootDir, "root-dir", "/var/lib/kubelet", "the kubelet's directory (volumes, logs)")
	fs.StringVar(&o.cgroupRoot, "cgroup-root", "auto", `parent cgroup of pods ("auto": kubepods under the kubelet's own cgroup)`)
	fs.StringVar(&o.address, "address", "0.0.0.0", "the logs/exec server's address")
	fs.IntVar(&o.port, "port", 10250, "the logs/exec server's port (0: disabled)")
	fs.StringVar(&o.tlsCert, "tls-cert-file", "", "the logs/exec server's certificate (required with --port)")
	fs.StringVar(&o.tlsKey, "tls-private-key-file", "", "the logs/exec server's key")
	fs.StringVar(&o.serverAuth.clientCA, "client-ca-file", "", "CA bundle that verifies the server's clients' certificates (CN the user, O the groups)")
	fs.BoolVar(&o.serverAuth.anonymous, "anonymous-auth", false, "serve requests without a client certificate as system:anonymous (still authorized); otherwise 401")
	fs.BoolVar(&o.serverAuth.tokenWebhook, "authentication-token-webhook", false, "authenticate bearer tokens (ServiceAccount tokens) by TokenReviews to the --kubeconfig apiserver")
	fs.DurationVar(&o.serverAuth.tokenCacheTTL, "authentication-token-webhook-cache-ttl", server.DefaultTokenCacheTTL, "how long a TokenReview's answer is remembered")
	fs.StringVar(&o.serverAuth.mode, "authorization-mode", modeWebhook, "who may use the server: Webhook (SubjectAccessReviews to the --kubeconfig apiserver) or AlwaysAllow")
	fs.DurationVar(&o.serverAuth.allowedTTL, "authorization-webhook-cache-authorized-ttl", server.DefaultAllowedTTL, "how long an allowed Webhook decision is remembered")
	fs.DurationVar(&o.serverAuth.deniedTTL, "authorization-webhook-cache-unauthorized-ttl", server.DefaultDeniedTTL, "how long a refused Webhook decision is remembered")
	fs.StringVar(&o.healthzAddress, "healthz-bind-address", "127.0.0.1", "address of the plain HTTP /healthz")
	fs.IntVar(&o.healthzPort, "healthz-port", 10248, "port of the plain HTTP /healthz (0: disabled)")
	fs.StringVar(&o.capacity, "capacity", "", "override detected capacity: cpu=2,memory=4Gi,pods=110")
	fs.StringVar(&o.reserved, "system-reserved", "", "resources kept from pods: cpu=100m,memory=256Mi")
	fs.DurationVar(&o.syncFrequency, "sync-frequency", 10*time.Second, "how often running pods are synced")
	fs.DurationVar(&o.relistPeriod, "relist-period", time.Second, "how often the runtime is relisted")
	fs.DurationVar(&o.statusUpdate, "node-status-update-frequency", 10*time.Second, "how often the node's status is computed")
	fs.DurationVar(&o.leaseRenew, "node-lease-renew-interval", 10*time.Second, "how often the node's Lease is renewed")
	fs.DurationVar(&o.crashLoopMax, "crashloop-max-restart-period", 5*time.Minute, "the longest CrashLoopBackOff (below 10s also the first)")
	fs.StringVar(&o.logLevel, "v", "info", "log level: debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if o.nodeName == "" {
		return nil, errors.New("--node-name is required")
	}
	return o, nil
}

func parseList(s string) (resource.List, error) {
	m := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want name=quantity", kv)
		}
		m[k] = v
	}
	return resource.ParseList(m)
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k != "" {
			out[k] = v
		}
	}
	return out
}

// cgroupRoot puts pods under the kubelet's own cgroup, so the limits of
// a node container bound its pods.
func cgroupRoot(flagValue string) string {
	if flagValue != "auto" {
		return flagValue
	}
	data, _ := os.ReadFile("/proc/self/cgroup")
	base := "/"
	for _, line := range strings.Split(string(data), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && (strings.Contains(parts[1], "memory") || parts[1] == "") {
			base = parts[2]
			if strings.Contains(parts[1], "memory") {
				break
			}
		}
	}
	return path.Join(base, "kubepods")
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "kubelet:", err)
		os.Exit(2)
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(o.logLevel))
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, o, log); err != nil {
		log.Error("kubelet", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o *options, log *slog.Logger) error {
	shutdown, err := telemetry.Setup(ctx, "kubelet", o.otlp)
	if err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = shutdown(sctx)
	}()

	taints, err := nodestatus.ParseTaints(o.taints)
	if err != nil {
		return err
	}
	capacity := nodestatus.DetectCapacity(o.rootDir)
	override, err := parseList(o.capacity)
	if err != nil {
		return fmt.Errorf("--capacity: %w", err)
	}
	for k, v := range override {
		capacity[k] = v
	}
	reserved, err := parseList(o.reserved)
	if err != nil {
		return fmt.Errorf("--system-reserved: %w", err)
	}
	nodeIP := o.nodeIP
	if nodeIP == "" {
		nodeIP = kubelet.DetectNodeIP()
	}
	var nodeIPs []string
	if nodeIP != "" {
		nodeIPs = []string{nodeIP}
	}
	for _, d := range []string{o.rootDir, o.podLogsDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}

	conn, err := dialAPIServer(o.apiserver, o.creds)
	if err != nil {
		return fmt.Errorf("apiserver %s: %w", o.apiserver, err)
	}
	defer conn.Close()
	api, closeWatch, err := withWatchEndpoint(conn, o.watchEndpoint, o.creds)
	if err != nil {
		return fmt.Errorf("watch endpoint %s: %w", o.watchEndpoint, err)
	}
	defer closeWatch()

	rt, err := cri.New(o.runtimeEndpoint, cri.WithImageEndpoint(o.imageEndpoint), cri.WithLogger(log))
	if err != nil {
		return err
	}
	defer rt.Close()
	var name, version string
	for delay := 200 * time.Millisecond; ; delay = min(delay*2, 5*time.Second) {
		if name, version, err = rt.Version(ctx); err == nil {
			break
		}
		log.Warn("waiting for the container runtime", "endpoint", o.runtimeEndpoint, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}

	tokens, err := tokenManager(o, log)
	if err != nil {
		return fmt.Errorf("token manager: %w", err)
	}
	kl, err := kubelet.New(kubelet.Config{
		NodeName:                  o.nodeName,
		NodeIPs:                   nodeIPs,
		PodCIDR:                   o.podCIDR,
		Taints:                    taints,
		Labels:                    parseLabels(o.labels),
		RootDir:                   o.rootDir,
		PodLogsDir:                o.podLogsDir,
		ClusterDNS:                poddns.Cluster{Servers: splitList(o.clusterDNS), Domain: o.clusterDomain},
		ResolvConf:                o.resolvConf,
		CgroupRoot:                cgroupRoot(o.cgroupRoot),
		StaticPodPath:             o.staticPodPath,
		Capacity:                  capacity,
		Reserved:                  reserved,
		KubeletPort:               int32(o.port),
		Resync:                    o.syncFrequency,
		RelistPeriod:              o.relistPeriod,
		CrashLoopMaxRestartPeriod: o.crashLoopMax,
		NodeStatus: nodestatus.Config{
			Info:           kubelet.SystemInfo(goruntime.GOARCH, name+"://"+strings.TrimPrefix(version, "v")),
			UpdateInterval: o.statusUpdate,
			RenewInterval:  o.leaseRenew,
		},
	}, kubelet.Deps{Conn: api, Runtime: rt, Clock: clock.Real{}, Log: log, Tokens: tokens})
	if err != nil {
		return err
	}
	if o.port > 0 {
		cfg, err := serverConfig(o)
		if err != nil {
			return fmt.Errorf("kubelet server: %w", err)
		}
		srv := server.New(cfg, kl, rt, log)
		go func() {
			if err := srv.Serve(ctx); err != nil {
				log.Error("kubelet server", "err", err)
			}
		}()
	}
	log.Info("kubelet starting", "node", o.nodeName, "runtime", name+" "+version, "nodeIP", nodeIP, "podCIDR", o.podCIDR)
	return kl.Run(ctx)
}
