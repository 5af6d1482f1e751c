package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/grpcdyn"
	"podline.dev/pkg/watchcache"
	_ "podline.dev/proto/all" // every kind's Go type
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/audit"
	"podline.dev/services/apiserver/internal/grpcapi"
	"podline.dev/services/apiserver/internal/registry"
	"podline.dev/services/apiserver/internal/rest"
	"podline.dev/services/apiserver/internal/storage"
)

// Config is what the apiserver needs to run.
type Config struct {
	// Etcd is the client of the etcd cluster; the apiserver is its only user.
	Etcd *clientv3.Client
	// EtcdTimeout bounds each etcd call (default 10s).
	EtcdTimeout time.Duration
	// CompactionInterval is how often old revisions are compacted (0: never).
	CompactionInterval time.Duration
	// WatchCache options apply to every resource's watch cache.
	WatchCache []watchcache.Option
	// TLS, when set, is the serving configuration; otherwise the listener
	// speaks plain HTTP/1.1 and unencrypted HTTP/2 (gRPC).
	TLS *tls.Config
	// GRPCInsecure serves the native gRPC port (ServeGRPC) without TLS even
	// when TLS is set: podline's components dial it in plain text until
	// authentication exists. The REST port keeps TLS.
	GRPCInsecure bool
	// Auth, when set, authenticates and authorizes every request.
	Auth *AuthConfig
	// Audit, when set, logs requests as its policy says.
	Audit *audit.Logger
	// Kubelet is how pods/log and pods/exec reach the kubelets.
	Kubelet KubeletConfig
	// Services configures Service allocation and the kubernetes Service.
	Services ServicesConfig
}

// ServicesConfig is --service-cluster-ip-range, --service-node-port-range
// and what the kubernetes Service names.
type ServicesConfig struct {
	// ClusterIPRange is the Service CIDR (default 10.96.0.0/12).
	ClusterIPRange string
	// NodePortRange is "lo-hi" (default 30000-32767).
	NodePortRange string
	// RepairInterval is the period of the allocation repair (default 3m).
	RepairInterval time.Duration
	// LeakRepairs is how many repairs must see a leak before it is freed (default 3).
	LeakRepairs int
	// AdvertiseAddress is the address the kubernetes Service's endpoints
	// name; empty: the host's first non-loopback IPv4 address.
	AdvertiseAddress string
	// SecurePort is the endpoints' port (default 6443).
	SecurePort int32
	// EndpointInterval and LeaseTTL time the kubernetes Service reconciler
	// (defaults 10s and 15s).
	EndpointInterval, LeaseTTL time.Duration
	// Disable turns off the kubernetes Service reconciler (allocation stays).
	DisableKubernetesService bool
}

// Defaults of ServicesConfig.
const (
	DefaultServiceClusterIPRange = "10.96.0.0/12"
	DefaultServiceNodePortRange  = "30000-32767"
)

// Server is a running apiserver.
type Server struct {
	cfg        Config
	store      *storage.Store
	registries map[string]*registry.Registry
	cachers    []*registry.Cacher
	grpc       *grpc.Server // in-process (REST gateway) and gRPC on the REST port
	native     *grpc.Server // gRPC on its own port: what podline's components use
	inproc     *bufconn.Listener
	handler    http.Handler
	auth       *auth // nil: no authentication, authorization or audit
	services   *serviceParts
}

// New builds the server; Run starts it.
func New(ctx context.Context, cfg Config) (*Server, error) {
	s := &Server{
		cfg:        cfg,
		store:      storage.NewStore(cfg.Etcd, cfg.EtcdTimeout),
		registries: map[string]*registry.Registry{},
		inproc:     bufconn.Listen(1 << 20),
	}
	// The in-process server trusts the user the REST filter forwards; the
	// native one authenticates its callers itself.
	s.grpc = newGRPCServer(nil, grpc.ChainUnaryInterceptor(s.unaryInterceptor(true)), grpc.ChainStreamInterceptor(s.streamInterceptor(true)))
	s.native = newGRPCServer(nativeTLS(cfg), grpc.ChainUnaryInterceptor(s.unaryInterceptor(false)), grpc.ChainStreamInterceptor(s.streamInterceptor(false)))
	var regs []*registry.Registry
	chain := s.admissionChain()
	var err error
	if s.services, err = newServiceParts(cfg); err != nil {
		return nil, err
	}
	for _, res := range apis.Resources {
		opts := []registry.Option{registry.WithAdmission(chain)}
		if res.GroupResource() == "services" {
			opts = append(opts, registry.WithAllocation(s.services.alloc))
		}
		reg, err := registry.New(res, s.store, opts...)
		if err != nil {
			return nil, err
		}
		s.cachers = append(s.cachers, reg.EnableWatchCache(cfg.WatchCache...))
		s.registries[res.GroupResource()] = reg
		regs = append(regs, reg)
	}
	if cfg.Auth != nil || cfg.Audit != nil {
		var err error
		if s.auth, err = s.newAuth(cfg.Auth, cfg.Audit); err != nil {
			return nil, err
		}
	}
	for _, gs := range []*grpc.Server{s.grpc, s.native} {
		if err := grpcapi.Register(gs, regs); err != nil {
			return nil, err
		}
	}
	conn, err := grpc.NewClient("passthrough:///inproc",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return s.inproc.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler()),
		grpc.WithChainUnaryInterceptor(s.forwardUnary),
		grpc.WithChainStreamInterceptor(s.forwardStream),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		return nil, err
	}
	live := []rest.Check{{Name: "ping", Fn: func(context.Context) error { return nil }}}
	ready := append(live,
		rest.Check{Name: "etcd", Fn: func(ctx context.Context) error { _, err := s.store.CurrentRevision(ctx); return err }},
		rest.Check{Name: "watch-cache", Fn: s.cachesSynced},
	)
	api, err := rest.NewHandler(ctx, conn, live, ready)
	if err != nil {
		return nil, err
	}
	api = s.withAuthentication(s.withPodProxy(s.withTokenRequest(s.withReviews(api))))
	// REST requests get a span that continues the caller's traceparent;
	// gRPC requests get theirs from the server's stats handler.
	api = otelhttp.NewHandler(api, "apiserver", otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
		return r.Method + " " + r.URL.Path
	}))
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			s.native.ServeHTTP(w, r) // gRPC clients authenticate like on the native port
			return
		}
		api.ServeHTTP(w, r)
	})
	return s, nil
}

// nativeTLS is the serving configuration of the native gRPC port.
func nativeTLS(cfg Config) *tls.Config {
	if cfg.GRPCInsecure {
		return nil
	}
	return servingTLS(cfg)
}

func newGRPCServer(tlsConfig *tls.Config, extra ...grpc.ServerOption) *grpc.Server {
	opts := []grpc.ServerOption{
		grpc.MaxRecvMsgSize(rest.MaxRequestBodyBytes + 4096),
		grpc.StatsHandler(otelgrpc.NewServerHandler()),
		grpcdyn.ServerCodec(), // watch events encoded once for all watchers
	}
	if tlsConfig != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsConfig)))
	}
	return grpc.NewServer(append(opts, extra...)...)
}

// ServeGRPC answers gRPC on lis with grpc-go's own transport until ctx ends.
func (s *Server) ServeGRPC(ctx context.Context, lis net.Listener) error {
	go func() { <-ctx.Done(); s.native.Stop() }()
	return s.native.Serve(lis)
}

// Handler serves gRPC (HTTP/2, application/grpc) and REST.
func (s *Server) Handler() http.Handler { return s.handler }

// Registry returns the registry of a resource ("pods", "deployments.apps").
func (s *Server) Registry(groupResource string) *registry.Registry {
	return s.registries[groupResource]
}

func (s *Server) cachesSynced(context.Context) error {
	for _, c := range s.cachers {
		select {
		case <-c.Synced():
		default:
			return errors.New("watch cache not synced")
		}
	}
	return nil
}

// Run starts the watch caches, the compactor and the in-process gRPC
// listener, creates the system namespaces, and returns once the caches hold
// their first lists. Everything stops when ctx ends.
func (s *Server) Run(ctx context.Context) error {
	for _, c := range s.cachers {
		go c.Run(ctx)
	}
	if s.cfg.CompactionInterval > 0 {
		go storage.NewCompactor(s.cfg.Etcd, s.cfg.CompactionInterval).Run(ctx)
	}
	go func() { _ = s.grpc.Serve(s.inproc) }()
	go func() { <-ctx.Done(); s.grpc.Stop() }()
	if s.auth != nil {
		s.auth.run(ctx)
	}
	for _, c := range s.cachers {
		select {
		case <-c.Synced():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := s.bootstrap(ctx); err != nil {
		return err
	}
	if rbacEnabled(s.cfg.Auth) {
		if err := s.bootstrapPolicy(ctx); err != nil {
			return err
		}
	}
	if err := s.runServices(ctx); err != nil {
		return err
	}
	return s.waitAuthSynced(ctx)
}

// SystemNamespaces are created at start, as kube-apiserver does.
var SystemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

func (s *Server) bootstrap(ctx context.Context) error {
	reg := s.registries["namespaces"]
	for _, name := range SystemNamespaces {
		ns := &corev1.Namespace{Metadata: &metav1.ObjectMeta{Name: name}}
		for {
			_, err := reg.Create(ctx, "", ns, false)
			if err == nil || apierrors.IsAlreadyExists(err) {
				break
			}
			if !apierrors.IsServiceUnavailable(err) || ctx.Err() != nil {
				return fmt.Errorf("bootstrap namespace %s: %w", name, err)
			}
			slog.Warn("bootstrap: etcd unavailable, retrying", "namespace", name)
			time.Sleep(time.Second)
		}
	}
	return nil
}

// Serve answers on lis until ctx ends.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	hs := &http.Server{Handler: s.handler, ReadHeaderTimeout: 30 * time.Second,
		// Each watch is a stream; kubectl and informers hold many at once.
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 100000}}
	hs.Protocols = new(http.Protocols)
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetHTTP2(true)
	if s.cfg.TLS != nil {
		hs.TLSConfig = servingTLS(s.cfg).Clone()
		hs.TLSConfig.NextProtos = []string{"h2", "http/1.1"}
		lis = tls.NewListener(lis, hs.TLSConfig)
	} else {
		hs.Protocols.SetUnencryptedHTTP2(true)
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	err := hs.Serve(lis)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
