package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"podline.dev/services/cri/internal/cni"
	"podline.dev/services/cri/internal/server"
)

// Config is podline-cri's configuration (its flags).
type Config struct {
	// Listen is the CRI socket path (/run/podline/cri.sock).
	Listen string
	// Containerd is containerd's socket (/run/containerd/containerd.sock).
	Containerd string
	// Namespace is the containerd namespace (podline).
	Namespace    string
	SandboxImage string
	Snapshotter  string
	RootDir      string
	StateDir     string
	NetNSDir     string
	HostsDir     string
	CgroupParent string
	ImageFsDir   string
	// CNI configuration and plugin directories, and libcni's cache.
	CNIConfDir  string
	CNIBinDirs  []string
	CNICacheDir string
	// PodCIDR fills ${POD_CIDR} in a CNI template until the kubelet
	// gives one through UpdateRuntimeConfig.
	PodCIDR         string
	StreamAddr      string
	AllowPrivileged bool
	Logger          *slog.Logger
}

// Defaults are the node's paths.
func Defaults() Config {
	return Config{
		Listen:       "/run/podline/cri.sock",
		Containerd:   "/run/containerd/containerd.sock",
		Namespace:    "podline",
		SandboxImage: "docker.io/podline/pause:3.10",
		Snapshotter:  "overlayfs",
		RootDir:      "/var/lib/podline-cri",
		StateDir:     "/run/podline-cri",
		NetNSDir:     "/var/run/netns",
		HostsDir:     "/etc/containerd/certs.d",
		CgroupParent: "/podline",
		ImageFsDir:   "/var/lib/containerd",
		CNIConfDir:   "/etc/cni/net.d",
		CNIBinDirs:   []string{"/usr/lib/cni", "/opt/cni/bin"},
		CNICacheDir:  "/var/lib/cni",
		StreamAddr:   "127.0.0.1:0",
	}
}

// Daemon is a running podline-cri.
type Daemon struct {
	Service *server.Service
	client  *containerd.Client
	grpc    *grpc.Server
	done    chan error
}

// Start connects to containerd (waiting up to a minute for it), recovers
// the runtime's state and serves the CRI on cfg.Listen.
func Start(ctx context.Context, cfg Config) (*Daemon, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	client, err := dialContainerd(ctx, cfg.Containerd, cfg.Namespace)
	if err != nil {
		return nil, err
	}
	network := cni.New(cni.WithConfDir(cfg.CNIConfDir), cni.WithBinDirs(cfg.CNIBinDirs...),
		cni.WithCacheDir(cfg.CNICacheDir), cni.WithPodCIDR(cfg.PodCIDR), cni.WithLogger(log))
	svc, err := server.New(ctx, client, network,
		server.WithNamespace(cfg.Namespace), server.WithSandboxImage(cfg.SandboxImage),
		server.WithSnapshotter(cfg.Snapshotter), server.WithRootDir(cfg.RootDir), server.WithStateDir(cfg.StateDir),
		server.WithNetNSDir(cfg.NetNSDir), server.WithRegistryHostsDir(cfg.HostsDir),
		server.WithCgroupParent(cfg.CgroupParent), server.WithImageFsDir(cfg.ImageFsDir),
		server.WithAllowPrivileged(cfg.AllowPrivileged), server.WithStreamAddr(cfg.StreamAddr), server.WithLogger(log),
	)
	if err != nil {
		client.Close()
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Listen), 0o755); err != nil {
		client.Close()
		return nil, err
	}
	if err := os.Remove(cfg.Listen); err != nil && !errors.Is(err, os.ErrNotExist) {
		client.Close()
		return nil, err
	}
	ln, err := net.Listen("unix", cfg.Listen)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	g := grpc.NewServer(grpc.StatsHandler(otelgrpc.NewServerHandler()), grpc.MaxRecvMsgSize(16<<20), grpc.MaxSendMsgSize(16<<20),
		grpc.ChainUnaryInterceptor(recoverPanics(log)))
	svc.Register(g)
	d := &Daemon{Service: svc, client: client, grpc: g, done: make(chan error, 1)}
	go func() { d.done <- g.Serve(ln) }()
	log.Info("podline-cri serving", "socket", cfg.Listen, "containerd", cfg.Containerd, "namespace", cfg.Namespace)
	return d, nil
}

func dialContainerd(ctx context.Context, address, ns string) (*containerd.Client, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := containerd.New(address, containerd.WithDefaultNamespace(ns), containerd.WithTimeout(5*time.Second))
		if err == nil {
			if ok, serr := c.IsServing(ctx); ok {
				return c, nil
			} else {
				err = serr
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("connect to containerd at %s: %w", address, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Done reports the gRPC server's end.
func (d *Daemon) Done() <-chan error { return d.done }

// Stop stops serving; containers keep running (a restarted podline-cri
// recovers them).
func (d *Daemon) Stop() {
	d.grpc.Stop()
	_ = d.Service.Close()
	_ = d.client.Close()
}

// recoverPanics answers a call that panicked with Internal and logs it,
// so one bad request does not take the node's runtime down.
func recoverPanics(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("CRI call panicked", "method", info.FullMethod, "panic", r, "stack", string(debug.Stack()))
				err = status.Errorf(codes.Internal, "%s panicked: %v", info.FullMethod, r)
			}
		}()
		return handler(ctx, req)
	}
}
