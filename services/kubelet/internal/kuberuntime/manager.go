package kuberuntime

import (
	"log/slog"
	"path/filepath"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"podline.dev/pkg/clock"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/backoff"
	"podline.dev/services/kubelet/internal/events"
	"podline.dev/services/kubelet/internal/poddns"
	"podline.dev/services/kubelet/internal/runtime"
	"podline.dev/services/kubelet/internal/volumes"
)

// TracerName is the kubelet's tracer.
const TracerName = "podline.dev/services/kubelet"

// Manager carries out pod actions on the runtime.
type Manager struct {
	runtime  runtime.Runtime
	recorder events.Recorder
	probes   ProbeResults
	source   volumes.Source
	services ServiceLister
	clock    clock.Clock
	log      *slog.Logger
	rootDir  string
	logsDir  string
	tracer   trace.Tracer

	dns        poddns.Cluster
	resolvConf string
	cgroupRoot string

	crashBackoff *backoff.Backoff
	imageBackoff *backoff.Backoff
	Reasons      *ReasonCache
}

// Config is what a Manager needs.
type Config struct {
	Runtime  runtime.Runtime
	Recorder events.Recorder
	Probes   ProbeResults
	Source   volumes.Source
	// Services give containers their Service variables (nil: none).
	Services ServiceLister
	Clock    clock.Clock
	Log      *slog.Logger
	// RootDir holds logs and per-pod files (/var/lib/kubelet).
	RootDir string
	// PodLogsDir holds the pods' container logs (/var/log/pods; default
	// <RootDir>/logs).
	PodLogsDir string
	// ClusterDNS are the cluster's DNS servers and domain (--cluster-dns,
	// --cluster-domain).
	ClusterDNS poddns.Cluster
	// ResolvConf is the node's resolver configuration, which Default pods
	// get and ClusterFirst pods extend ("": none).
	ResolvConf string
	// CgroupRoot is the parent of the pods' cgroups ("": the runtime's).
	CgroupRoot string
	// CrashBackoff and ImageBackoff default to 10 s doubling to 5 min.
	CrashBackoff *backoff.Backoff
	ImageBackoff *backoff.Backoff
}

// NewManager returns a Manager.
func NewManager(cfg Config) *Manager {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.CrashBackoff == nil {
		cfg.CrashBackoff = backoff.New(cfg.Clock, backoff.DefaultInitial, backoff.DefaultMax)
	}
	if cfg.ImageBackoff == nil {
		cfg.ImageBackoff = backoff.New(cfg.Clock, backoff.DefaultInitial, backoff.DefaultMax)
	}
	if cfg.PodLogsDir == "" {
		cfg.PodLogsDir = filepath.Join(cfg.RootDir, "logs")
	}
	return &Manager{
		runtime: cfg.Runtime, recorder: cfg.Recorder, probes: cfg.Probes, source: cfg.Source, services: cfg.Services,
		clock: cfg.Clock, log: cfg.Log, rootDir: cfg.RootDir, logsDir: cfg.PodLogsDir, tracer: otel.Tracer(TracerName),
		crashBackoff: cfg.CrashBackoff, imageBackoff: cfg.ImageBackoff, Reasons: NewReasonCache(),
		dns: cfg.ClusterDNS, resolvConf: cfg.ResolvConf, cgroupRoot: cfg.CgroupRoot,
	}
}

// ServiceLister lists the Services of every namespace, from a cache.
type ServiceLister interface {
	// ListServices fails until the Services have been read once, so no
	// container starts without the variables it should have.
	ListServices() ([]*corev1.Service, error)
}

// GC forgets backoffs idle for long.
func (m *Manager) GC() {
	m.crashBackoff.GC()
	m.imageBackoff.GC()
}
