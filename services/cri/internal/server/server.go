package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/singleflight"
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"

	"podline.dev/services/cri/internal/cni"
)

// RuntimeName is what Version reports.
const RuntimeName = "podline-cri"

// RuntimeVersion is podline-cri's version.
const RuntimeVersion = "0.1.0"

// criAPIVersion is the CRI version served.
const criAPIVersion = "v1"

// Service is the CRI RuntimeService and ImageService.
type Service struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	client *containerd.Client
	cni    *cni.Plugin
	store  *store
	log    *slog.Logger
	tracer trace.Tracer
	stream streaming.Server
	pulls  singleflight.Group
	// bg is the context of the waits on tasks; Close ends them.
	bg     context.Context
	stopBg context.CancelFunc

	namespace       string
	sandboxImage    string
	snapshotter     string
	rootDir         string
	stateDir        string
	netnsDir        string
	hostsDir        string
	cgroupParent    string
	allowPrivileged bool
	streamAddr      string
	imageFsDir      string
	// sysctls every sandbox not on the host network gets unless its
	// config sets them.
	defaultSysctls map[string]string
}

var (
	_ runtimeapi.RuntimeServiceServer = (*Service)(nil)
	_ runtimeapi.ImageServiceServer   = (*Service)(nil)
)

// Option configures a Service.
type Option func(*Service)

// WithNamespace is the containerd namespace (podline).
func WithNamespace(ns string) Option { return func(s *Service) { s.namespace = ns } }

// WithSandboxImage is the pause image (docker.io/podline/pause:3.10).
func WithSandboxImage(ref string) Option { return func(s *Service) { s.sandboxImage = ref } }

// WithSnapshotter is the snapshotter images are unpacked into (overlayfs).
func WithSnapshotter(name string) Option { return func(s *Service) { s.snapshotter = name } }

// WithRootDir holds each sandbox's files (/var/lib/podline-cri).
func WithRootDir(dir string) Option { return func(s *Service) { s.rootDir = dir } }

// WithStateDir holds FIFOs of container streams (/run/podline-cri).
func WithStateDir(dir string) Option { return func(s *Service) { s.stateDir = dir } }

// WithNetNSDir is where sandbox network namespaces are pinned (/var/run/netns).
func WithNetNSDir(dir string) Option { return func(s *Service) { s.netnsDir = dir } }

// WithRegistryHostsDir is the registry hosts directory (/etc/containerd/certs.d).
func WithRegistryHostsDir(dir string) Option { return func(s *Service) { s.hostsDir = dir } }

// WithCgroupParent is the cgroup every pod's cgroup is made under (/podline).
func WithCgroupParent(p string) Option { return func(s *Service) { s.cgroupParent = p } }

// WithAllowPrivileged honours privileged containers instead of refusing them.
func WithAllowPrivileged(ok bool) Option { return func(s *Service) { s.allowPrivileged = ok } }

// WithStreamAddr is the streaming server's address (127.0.0.1:0).
func WithStreamAddr(addr string) Option { return func(s *Service) { s.streamAddr = addr } }

// WithImageFsDir is a directory on the filesystem images are kept on
// (containerd's root, /var/lib/containerd), for ImageFsInfo.
func WithImageFsDir(dir string) Option { return func(s *Service) { s.imageFsDir = dir } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.log = l } }

// New returns a Service on a connected containerd client and a CNI plugin,
// and rebuilds its store from what containerd holds.
func New(ctx context.Context, client *containerd.Client, network *cni.Plugin, opts ...Option) (*Service, error) {
	s := &Service{
		client:       client,
		cni:          network,
		store:        newStore(),
		log:          slog.Default(),
		tracer:       otel.Tracer("podline.dev/services/cri"),
		namespace:    "podline",
		sandboxImage: "docker.io/podline/pause:3.10",
		snapshotter:  "overlayfs",
		rootDir:      "/var/lib/podline-cri",
		stateDir:     "/run/podline-cri",
		netnsDir:     "/var/run/netns",
		hostsDir:     "/etc/containerd/certs.d",
		cgroupParent: "/podline",
		streamAddr:   "127.0.0.1:0",
		imageFsDir:   "/var/lib/containerd",
		defaultSysctls: map[string]string{
			"net.ipv4.ip_unprivileged_port_start": "0",
			"net.ipv4.ping_group_range":           "0 2147483647",
		},
	}
	for _, o := range opts {
		o(s)
	}
	s.bg, s.stopBg = context.WithCancel(namespaced(context.WithoutCancel(ctx), s.namespace))
	for _, d := range []string{s.rootDir, s.fifoDir(), s.netnsDir} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return nil, err
		}
	}
	if err := s.recover(s.ctx(ctx)); err != nil {
		return nil, fmt.Errorf("recover state from containerd: %w", err)
	}
	st, err := newStreamServer(s, s.streamAddr)
	if err != nil {
		return nil, err
	}
	s.stream = st
	return s, nil
}

// Register adds both services to a gRPC server.
func (s *Service) Register(g *grpc.Server) {
	runtimeapi.RegisterRuntimeServiceServer(g, s)
	runtimeapi.RegisterImageServiceServer(g, s)
}

// Close stops the streaming server.
func (s *Service) Close() error {
	s.stopBg()
	// Let go of running containers' streams: a runtime started after
	// this one reattaches to them.
	for _, c := range s.store.listContainers("") {
		var task containerd.Task
		s.store.read(func() { task = c.task })
		if task != nil && task.IO() != nil {
			// Cancel stops the copies; Close would also remove the
			// FIFOs the next runtime reattaches to.
			task.IO().Cancel()
		}
	}
	return s.stream.Stop()
}

// ctx puts the containerd namespace on a request's context.
func (s *Service) ctx(ctx context.Context) context.Context {
	return namespaced(ctx, s.namespace)
}

func (s *Service) fifoDir() string { return filepath.Join(s.stateDir, "fifo") }

func (s *Service) sandboxDir(id string) string { return filepath.Join(s.rootDir, "sandboxes", id) }

func newID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Version reports podline-cri and the CRI version.
func (s *Service) Version(ctx context.Context, _ *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{
		Version:           "0.1.0",
		RuntimeName:       RuntimeName,
		RuntimeVersion:    RuntimeVersion,
		RuntimeApiVersion: criAPIVersion,
	}, nil
}

// Status reports RuntimeReady (containerd answers) and NetworkReady (a
// CNI configuration loads).
func (s *Service) Status(ctx context.Context, req *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	rt := &runtimeapi.RuntimeCondition{Type: runtimeapi.RuntimeReady, Status: true}
	cctx, cancel := context.WithTimeout(s.ctx(ctx), 5*time.Second)
	defer cancel()
	if ok, err := s.client.IsServing(cctx); !ok {
		rt.Status, rt.Reason, rt.Message = false, "ContainerdNotReady", fmt.Sprintf("containerd does not answer: %v", err)
	}
	nw := &runtimeapi.RuntimeCondition{Type: runtimeapi.NetworkReady, Status: true}
	if err := s.cni.Status(); err != nil {
		nw.Status, nw.Reason, nw.Message = false, "NetworkPluginNotReady", err.Error()
	}
	resp := &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{rt, nw}}}
	if req.GetVerbose() {
		resp.Info = map[string]string{"namespace": s.namespace, "sandboxImage": s.sandboxImage}
	}
	return resp, nil
}

// UpdateRuntimeConfig takes the node's pod CIDR for the CNI template.
func (s *Service) UpdateRuntimeConfig(ctx context.Context, req *runtimeapi.UpdateRuntimeConfigRequest) (*runtimeapi.UpdateRuntimeConfigResponse, error) {
	if cidr := req.GetRuntimeConfig().GetNetworkConfig().GetPodCidr(); cidr != "" {
		s.cni.SetPodCIDR(cidr)
		s.log.Info("pod CIDR set", "podCIDR", cidr)
	}
	return &runtimeapi.UpdateRuntimeConfigResponse{}, nil
}

// RuntimeConfig reports the cgroup driver.
func (s *Service) RuntimeConfig(context.Context, *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	return &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_CGROUPFS}}, nil
}
