package apiservertest

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"podline.dev/pkg/client"
	"podline.dev/pkg/watchcache"
	"podline.dev/services/apiserver/internal/natspub"
	"podline.dev/services/apiserver/internal/server"
)

// Server is a running test apiserver.
type Server struct {
	Etcd *Etcd
	// URL is the REST base URL (http://127.0.0.1:port).
	URL string
	// Addr is host:port of the gRPC port (REST's port also answers gRPC).
	Addr string
	// Conn is a gRPC connection to the server.
	Conn *grpc.ClientConn
	// API is the server itself, for tests that reach inside.
	API *server.Server
	// Publisher is the NATS publisher (nil without WithNATS).
	Publisher *natspub.Publisher
	// PKI is the directory of the cluster identity (CAs, certificates,
	// ServiceAccount key) of a server started with StartSecure; "" otherwise.
	PKI string
}

// Option changes the test server's configuration.
type Option func(*config)

type config struct {
	server.Config
	natsURL  string
	natsOpts []natspub.Option
	natsTLS  *tls.Config
	// noDefaultAccounts turns off defaultServiceAccounts.
	noDefaultAccounts bool
}

// WithEtcdTimeout bounds each etcd call.
func WithEtcdTimeout(d time.Duration) Option { return func(c *config) { c.EtcdTimeout = d } }

// WithNATS publishes every watch event to the JetStream of the NATS server
// at url, as the apiserver's --nats-url does.
func WithNATS(url string, opts ...natspub.Option) Option {
	return func(c *config) { c.natsURL, c.natsOpts = url, opts }
}

// WithServices changes the Service allocation and kubernetes Service
// settings (ranges, repair and reconcile periods).
func WithServices(fn func(*server.ServicesConfig)) Option {
	return func(c *config) { fn(&c.Services) }
}

// WithNATSTLS connects to the NATS server of WithNATS over TLS with cfg,
// as the apiserver's --nats-ca-file, --nats-cert-file and --nats-key-file
// do.
func WithNATSTLS(cfg *tls.Config) Option { return func(c *config) { c.natsTLS = cfg } }

// Start runs etcd and the apiserver until the test ends.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	etcd := StartEtcd(t)
	return StartOn(t, etcd, opts...)
}

// StartOn runs an apiserver on an existing etcd (tests start several to share one etcd).
func StartOn(t testing.TB, etcd *Etcd, opts ...Option) *Server {
	t.Helper()
	return start(t, etcd, "", opts...)
}

// start runs the apiserver; with pkiDir it serves TLS with authentication
// and authorization on, and Conn is an administrator's connection.
func start(t testing.TB, etcd *Etcd, pkiDir string, opts ...Option) *Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := config{Config: server.Config{
		Etcd:        etcd.Client,
		EtcdTimeout: 5 * time.Second,
		WatchCache:  []watchcache.Option{watchcache.WithBookmarkInterval(200 * time.Millisecond)},
		// The kubernetes Service's endpoints name a documentation address
		// (TEST-NET-1): a test host may have none but loopback, which
		// Endpoints refuse.
		Services: server.ServicesConfig{AdvertiseAddress: "192.0.2.1"},
	}}
	dial := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	scheme := "http://"
	if pkiDir != "" {
		secure(t, &cfg.Config, pkiDir)
		dial = dialOptions(t, adminCredentials(pkiDir))
		scheme = "https://"
	}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := server.New(ctx, cfg.Config)
	if err != nil {
		cancel()
		t.Fatalf("apiserver: %v", err)
	}
	var pub *natspub.Publisher
	if cfg.natsURL != "" {
		natsOpts := append([]natspub.Option{natspub.WithTLS(cfg.natsTLS)}, cfg.natsOpts...)
		if pub, err = natspub.Connect(ctx, cfg.natsURL, natsOpts...); err != nil {
			cancel()
			t.Fatalf("apiserver: %v", err)
		}
		s.SetWatchSinks(pub.For)
	}
	if err := s.Run(ctx); err != nil {
		cancel()
		t.Fatalf("apiserver run: %v", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	glis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{}, 2)
	go func() { defer func() { done <- struct{}{} }(); _ = s.Serve(ctx, lis) }()
	go func() { defer func() { done <- struct{}{} }(); _ = s.ServeGRPC(ctx, glis) }()
	conn, err := grpc.NewClient(glis.Addr().String(), dial...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		cancel()
		<-done
		<-done
	})
	if !cfg.noDefaultAccounts {
		defaultServiceAccounts(ctx, t, conn)
	}
	return &Server{Etcd: etcd, URL: scheme + lis.Addr().String(), Addr: glis.Addr().String(), Conn: conn, API: s, Publisher: pub, PKI: pkiDir}
}

// HTTPClient is a client for URL that speaks HTTP/1.1, as kubectl does by
// default. On a server started with StartSecure it trusts the cluster CA
// and presents no certificate (an anonymous client).
func (s *Server) HTTPClient() *http.Client {
	if s.PKI == "" {
		return &http.Client{Timeout: 30 * time.Second}
	}
	return s.httpClient(client.Credentials{CAFile: filepath.Join(s.PKI, "ca.crt")})
}
