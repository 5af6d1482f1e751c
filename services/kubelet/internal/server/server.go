package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"time"

	"podline.dev/pkg/secureserving"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/runtime"
)

// Pods finds the pods the kubelet runs.
type Pods interface {
	Pod(namespace, name string) (*corev1.Pod, bool)
}

// Config is how the server listens and whom it serves.
type Config struct {
	// Addr is host:port (":10250").
	Addr string
	// CertFile and KeyFile are the serving certificate and key
	// (--tls-cert-file, --tls-private-key-file); the server speaks only TLS.
	CertFile, KeyFile string
	// ClientCA verifies client certificates (--client-ca-file): the CN is
	// the user, the Os its groups. Nil accepts no certificate.
	ClientCA *x509.CertPool
	// Tokens authenticates bearer tokens (--authentication-token-webhook:
	// TokenReviews to the apiserver); nil refuses them with 401.
	Tokens secureserving.TokenAuthenticator
	// Anonymous serves requests without credentials as system:anonymous
	// (--anonymous-auth), still subject to Authorizer; otherwise they get
	// 401.
	Anonymous bool
	// NodeName is the Node whose proxy subresource requests are
	// authorized as.
	NodeName string
	// Authorizer decides every authenticated request (Webhook:
	// SubjectAccessReviews to the apiserver, or AlwaysAllow).
	Authorizer secureserving.Authorizer
	// HealthzAddr, when set, serves GET /healthz alone in plain HTTP on
	// host:port (--healthz-bind-address, --healthz-port).
	HealthzAddr string
}

// ErrNoServingCertificate means the server was started without
// Config.CertFile and Config.KeyFile.
var ErrNoServingCertificate = errors.New("the kubelet's server needs a serving certificate and key (--tls-cert-file, --tls-private-key-file)")

// Server serves logs, exec and port forwarding.
type Server struct {
	cfg     Config
	pods    Pods
	runtime runtime.Runtime
	log     *slog.Logger
	handler http.Handler
}

// New returns a Server.
func New(cfg Config, pods Pods, rt runtime.Runtime, log *slog.Logger) *Server {
	s := &Server{cfg: cfg, pods: pods, runtime: rt, log: log}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", s.logs)
	mux.HandleFunc("GET /exec/{namespace}/{pod}/{container}", s.exec)
	mux.HandleFunc("POST /exec/{namespace}/{pod}/{container}", s.exec)
	for _, m := range []string{"GET", "POST"} {
		mux.HandleFunc(m+" /portForward/{namespace}/{pod}", s.portForward)
		mux.HandleFunc(m+" /portForward/{namespace}/{pod}/{uid}", s.portForward)
	}
	s.handler = s.withAuth(mux)
	return s
}

func healthz(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }

// Serve listens until ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	cfg, err := s.tlsConfig()
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	if s.cfg.HealthzAddr != "" {
		hlis, err := net.Listen("tcp", s.cfg.HealthzAddr)
		if err != nil {
			lis.Close()
			return err
		}
		go s.serveHealthz(ctx, hlis)
	}
	return s.serveTLS(ctx, lis, cfg)
}

// ServeListener serves HTTPS on lis until ctx ends.
func (s *Server) ServeListener(ctx context.Context, lis net.Listener) error {
	cfg, err := s.tlsConfig()
	if err != nil {
		return err
	}
	return s.serveTLS(ctx, lis, cfg)
}

// tlsConfig serves the kubelet's certificate. Clients may present one; it
// is verified by the authenticator, so a bad one gets a 401 rather than a
// failed handshake.
func (s *Server) tlsConfig() (*tls.Config, error) {
	if s.cfg.CertFile == "" || s.cfg.KeyFile == "" {
		return nil, ErrNoServingCertificate
	}
	cert, err := tls.LoadX509KeyPair(s.cfg.CertFile, s.cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("kubelet serving certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}, nil
}

func (s *Server) serveTLS(ctx context.Context, lis net.Listener, cfg *tls.Config) error {
	srv := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second, TLSConfig: cfg}
	s.log.Info("kubelet server listening", "addr", lis.Addr().String(), "anonymous", s.cfg.Anonymous)
	return serveUntil(ctx, srv, tls.NewListener(lis, cfg))
}

// serveHealthz answers GET /healthz in plain HTTP on lis until ctx ends.
func (s *Server) serveHealthz(ctx context.Context, lis net.Listener) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", healthz)
	s.log.Info("kubelet healthz listening", "addr", lis.Addr().String())
	if err := serveUntil(ctx, &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, lis); err != nil {
		s.log.Error("kubelet healthz", "err", err)
	}
}

func serveUntil(ctx context.Context, srv *http.Server, lis net.Listener) error {
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// errNotFound answers 404.
var errNotFound = errors.New("not found")

// container finds a container instance of a pod: the newest, or the one
// before it (previous).
func (s *Server) container(ctx context.Context, namespace, podName, name string, previous bool) (*runtime.Container, error) {
	pod, ok := s.pods.Pod(namespace, podName)
	if !ok {
		return nil, fmt.Errorf("%w: pod %s/%s", errNotFound, namespace, podName)
	}
	cs, err := s.runtime.ListContainers(ctx, pod.GetMetadata().GetUid())
	if err != nil {
		return nil, err
	}
	var mine []*runtime.Container
	for _, c := range cs {
		if c.Name == name {
			mine = append(mine, c)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].Attempt > mine[j].Attempt })
	idx := 0
	if previous {
		idx = 1
	}
	if len(mine) <= idx {
		if previous {
			return nil, fmt.Errorf("%w: previous terminated container %q in pod %q not found", errNotFound, name, podName)
		}
		return nil, fmt.Errorf("%w: container %q in pod %q is waiting to start", errNotFound, name, podName)
	}
	return mine[idx], nil
}

func httpError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, errNotFound):
		code = http.StatusNotFound
	case errors.Is(err, runtime.ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, runtime.ErrNotRunning), errors.Is(err, runtime.ErrSandboxNotReady):
		code = http.StatusBadRequest
	}
	http.Error(w, err.Error(), code)
}
