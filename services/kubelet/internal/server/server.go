package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"time"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/runtime"
)

// Pods finds the pods the kubelet runs.
type Pods interface {
	Pod(namespace, name string) (*corev1.Pod, bool)
}

// Config is how the server listens.
type Config struct {
	// Addr is host:port (":10250").
	Addr string
	// CertFile and KeyFile make it serve HTTPS; empty serves plain HTTP.
	CertFile, KeyFile string
}

// Server serves logs and exec.
type Server struct {
	cfg     Config
	pods    Pods
	runtime runtime.Runtime
	log     *slog.Logger
	mux     *http.ServeMux
}

// New returns a Server.
func New(cfg Config, pods Pods, rt runtime.Runtime, log *slog.Logger) *Server {
	s := &Server{cfg: cfg, pods: pods, runtime: rt, log: log, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	s.mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", s.logs)
	s.mux.HandleFunc("GET /exec/{namespace}/{pod}/{container}", s.exec)
	s.mux.HandleFunc("POST /exec/{namespace}/{pod}/{container}", s.exec)
	return s
}

// Handler is the server's handler (tests serve it with httptest).
func (s *Server) Handler() http.Handler { return s.mux }

// Serve listens until ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	lis, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	return s.ServeListener(ctx, lis)
}

// ServeListener serves on lis until ctx ends.
func (s *Server) ServeListener(ctx context.Context, lis net.Listener) error {
	srv := &http.Server{Handler: s.mux, ReadHeaderTimeout: 10 * time.Second}
	if s.cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(s.cfg.CertFile, s.cfg.KeyFile)
		if err != nil {
			return fmt.Errorf("kubelet serving certificate: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		lis = tls.NewListener(lis, srv.TLSConfig)
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	s.log.Info("kubelet server listening", "addr", lis.Addr().String(), "tls", s.cfg.CertFile != "")
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
	case errors.Is(err, runtime.ErrNotRunning):
		code = http.StatusBadRequest
	}
	http.Error(w, err.Error(), code)
}
