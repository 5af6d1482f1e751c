// Command apiserver is podline's API server: the only component that reads
// and writes etcd. It serves gRPC and Kubernetes REST on one port.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"

	"podline.dev/pkg/healthprobe"
	"podline.dev/pkg/pki"
	"podline.dev/pkg/telemetry"
	"podline.dev/services/apiserver/internal/natspub"
	"podline.dev/services/apiserver/internal/server"
	"podline.dev/services/apiserver/internal/storage"
)

func main() {
	var (
		etcdServers  = flag.String("etcd-servers", "http://127.0.0.1:2379", "comma-separated etcd client URLs")
		etcdCA       = flag.String("etcd-cafile", "", "CA bundle of the etcd servers")
		etcdCert     = flag.String("etcd-certfile", "", "client certificate for etcd")
		etcdKey      = flag.String("etcd-keyfile", "", "client key for etcd")
		etcdTimeout  = flag.Duration("etcd-request-timeout", 5*time.Second, "bound on each etcd call; without quorum writes fail after it with 503")
		bind         = flag.String("bind-address", "0.0.0.0", "address to listen on")
		port         = flag.Int("secure-port", 6443, "port for REST at Kubernetes' paths (also answers gRPC)")
		grpcPort     = flag.Int("grpc-port", 6444, "port for gRPC on grpc-go's transport, used by podline's components")
		tlsCert      = flag.String("tls-cert-file", "", "serving certificate (plain HTTP/h2c when empty)")
		tlsKey       = flag.String("tls-private-key-file", "", "serving key")
		grpcInsecure = flag.Bool("grpc-insecure", false, "serve --grpc-port without TLS even with --tls-cert-file (until components authenticate)")
		compaction   = flag.Duration("etcd-compaction-interval", 5*time.Minute, "how often to compact etcd (0 disables)")
		otlpEndpoint = flag.String("otlp-endpoint", "", telemetry.EndpointFlagUsage)
		natsURL      = flag.String("nats-url", "", "publish every watch event to this NATS server's JetStream for the watchcache replicas (off when empty)")
		natsCA       = flag.String("nats-ca-file", "", "CA bundle that verifies the NATS server; with it the connection is TLS whatever --nats-url's scheme, and a NATS without TLS is refused")
		natsCert     = flag.String("nats-cert-file", "", "client certificate the apiserver presents to NATS (with --nats-ca-file)")
		natsKey      = flag.String("nats-key-file", "", "key of --nats-cert-file")
		kubeletCert  = flag.String("kubelet-client-certificate", "", "client certificate the apiserver presents to kubelets (pods/log, pods/exec)")
		kubeletKey   = flag.String("kubelet-client-key", "", "key of --kubelet-client-certificate")
		kubeletCA    = flag.String("kubelet-certificate-authority", "", "CA bundle that verifies the kubelets' serving certificates (empty: not verified)")
		svcIPRange   = flag.String("service-cluster-ip-range", server.DefaultServiceClusterIPRange, "CIDR from which Service ClusterIPs are allocated; its first IP is the kubernetes Service's")
		nodePorts    = flag.String("service-node-port-range", server.DefaultServiceNodePortRange, "port range reserved for Services of type NodePort and LoadBalancer")
		advertise    = flag.String("advertise-address", "", "IP the kubernetes Service's endpoints name for this apiserver (default: the host's first non-loopback IPv4 address)")
		kubeletAddrs = flag.String("kubelet-preferred-address-types", strings.Join(server.DefaultKubeletAddressTypes, ","), "Node address types tried in order to reach a kubelet")
	)
	var auth authFlags
	auth.bind(flag.CommandLine)
	probe := healthprobe.Flag(flag.CommandLine)
	flag.Parse()
	healthprobe.Run(*probe)
	slog.SetDefault(slog.New(slog.NewJSONHandler(os.Stderr, nil)))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, options{auth: auth,
		etcdServers: strings.Split(*etcdServers, ","), etcdCA: *etcdCA, etcdCert: *etcdCert, etcdKey: *etcdKey,
		etcdTimeout: *etcdTimeout, addr: net.JoinHostPort(*bind, fmt.Sprint(*port)),
		grpcAddr: net.JoinHostPort(*bind, fmt.Sprint(*grpcPort)),
		tlsCert:  *tlsCert, tlsKey: *tlsKey, grpcInsecure: *grpcInsecure, compaction: *compaction, otlp: *otlpEndpoint,
		natsURL: *natsURL, natsCA: *natsCA, natsCert: *natsCert, natsKey: *natsKey,
		kubelet: kubeletFlags{cert: *kubeletCert, key: *kubeletKey, ca: *kubeletCA, addressTypes: split(*kubeletAddrs)},
		services: server.ServicesConfig{ClusterIPRange: *svcIPRange, NodePortRange: *nodePorts,
			AdvertiseAddress: *advertise, SecurePort: int32(*port)},
	}); err != nil {
		slog.Error("apiserver failed", "err", err)
		os.Exit(1)
	}
}

type options struct {
	auth                            authFlags
	etcdServers                     []string
	etcdCA, etcdCert, etcdKey       string
	etcdTimeout                     time.Duration
	addr, grpcAddr, tlsCert, tlsKey string
	grpcInsecure                    bool
	compaction                      time.Duration
	otlp                            string
	natsURL                         string
	natsCA, natsCert, natsKey       string
	kubelet                         kubeletFlags
	services                        server.ServicesConfig
}

// kubeletFlags are kube-apiserver's flags for reaching kubelets.
type kubeletFlags struct {
	cert, key, ca string
	addressTypes  []string
}

// config is the kubelet client configuration the flags describe.
func (f kubeletFlags) config() (server.KubeletConfig, error) {
	if (f.cert == "") != (f.key == "") {
		return server.KubeletConfig{}, fmt.Errorf("--kubelet-client-certificate and --kubelet-client-key go together")
	}
	cfg := server.KubeletConfig{TLS: &tls.Config{MinVersion: tls.VersionTLS12}, PreferredAddressTypes: f.addressTypes}
	if f.cert != "" {
		pair, err := tls.LoadX509KeyPair(f.cert, f.key)
		if err != nil {
			return server.KubeletConfig{}, err
		}
		cfg.TLS.Certificates = []tls.Certificate{pair}
	}
	if f.ca != "" {
		pool, err := pki.LoadCertPool(f.ca)
		if err != nil {
			return server.KubeletConfig{}, err
		}
		cfg.TLS.RootCAs = pool
	}
	return cfg, nil
}

func run(ctx context.Context, o options) error {
	shutdown, err := telemetry.Setup(ctx, "apiserver", o.otlp)
	if err != nil {
		return err
	}
	defer func() { _ = shutdown(context.Background()) }()

	etcdTLS, err := clientTLS(o.etcdCA, o.etcdCert, o.etcdKey)
	if err != nil {
		return fmt.Errorf("etcd TLS: %w", err)
	}
	etcd, err := clientv3.New(clientv3.Config{
		Endpoints:   o.etcdServers,
		DialTimeout: 5 * time.Second,
		// A member that vanishes without closing its connections (a killed
		// container) is noticed within 13 s and left out of the rotation;
		// until then the storage layer's per-attempt retries route around it.
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: 3 * time.Second,
		// A watch response batches up to 1000 revisions with their previous
		// values; gRPC's 4 MiB default would break the watch under load.
		MaxCallRecvMsgSize: storage.MaxEtcdResponseBytes,
		TLS:                etcdTLS,
		DialOptions:        []grpc.DialOption{grpc.WithStatsHandler(otelgrpc.NewClientHandler())},
	})
	if err != nil {
		return err
	}
	defer etcd.Close()

	cfg := server.Config{Etcd: etcd, EtcdTimeout: o.etcdTimeout, CompactionInterval: o.compaction, GRPCInsecure: o.grpcInsecure, Services: o.services}
	if cfg.Kubelet, err = o.kubelet.config(); err != nil {
		return fmt.Errorf("kubelet client: %w", err)
	}
	if cfg.Auth, err = o.auth.config(); err != nil {
		return fmt.Errorf("authentication: %w", err)
	}
	auditLog, closeAudit, err := o.auth.auditLogger()
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer closeAudit.Close()
	cfg.Audit = auditLog
	if o.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			return err
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	s, err := server.New(ctx, cfg)
	if err != nil {
		return err
	}
	if o.natsURL != "" {
		natsTLS, err := pki.ClientTLS(o.natsCA, o.natsCert, o.natsKey)
		if err != nil {
			return fmt.Errorf("nats TLS: %w", err)
		}
		pub, err := natspub.Connect(ctx, o.natsURL, natspub.WithTLS(natsTLS))
		if err != nil {
			return err
		}
		s.SetWatchSinks(pub.For)
		slog.Info("publishing watch events", "nats", o.natsURL, "tls", natsTLS != nil, "epoch", pub.Epoch())
	}
	lis, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	glis, err := net.Listen("tcp", o.grpcAddr)
	if err != nil {
		return err
	}
	errc := make(chan error, 2)
	go func() { errc <- s.Serve(ctx, lis) }()
	go func() { errc <- s.ServeGRPC(ctx, glis) }()
	slog.Info("apiserver listening", "rest", o.addr, "grpc", o.grpcAddr, "etcd", o.etcdServers)
	if err := s.Run(ctx); err != nil {
		return err
	}
	slog.Info("apiserver ready")
	return <-errc
}

// clientTLS builds the etcd client's TLS configuration; nil without a CA.
func clientTLS(ca, cert, key string) (*tls.Config, error) {
	if ca == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(ca)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificates in %s", ca)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
