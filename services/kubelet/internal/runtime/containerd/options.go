package containerd

import (
	"log/slog"
	"time"

	"podline.dev/pkg/clock"
)

// Option configures a Runtime.
type Option func(*Runtime)

// WithNamespace is the containerd namespace (k8s.io).
func WithNamespace(ns string) Option { return func(r *Runtime) { r.namespace = ns } }

// WithSandboxImage is the pause image (podline/pause:3.10).
func WithSandboxImage(ref string) Option { return func(r *Runtime) { r.sandboxImage = ref } }

// WithSnapshotter is the snapshotter images are unpacked into (overlayfs).
func WithSnapshotter(name string) Option { return func(r *Runtime) { r.snapshotter = name } }

// WithNetNSDir is where sandbox network namespaces are pinned (/var/run/netns).
func WithNetNSDir(dir string) Option { return func(r *Runtime) { r.netnsDir = dir } }

// WithRegistryHostsDir is containerd's hosts directory (/etc/containerd/certs.d).
func WithRegistryHostsDir(dir string) Option { return func(r *Runtime) { r.hostsDir = dir } }

// WithFIFODir is where exec streams' FIFOs are made.
func WithFIFODir(dir string) Option { return func(r *Runtime) { r.fifoDir = dir } }

// WithCgroupParent is the cgroup every container's cgroup is made under.
func WithCgroupParent(path string) Option { return func(r *Runtime) { r.cgroupParent = path } }

// WithDialTimeout bounds the first connection to containerd.
func WithDialTimeout(d time.Duration) Option { return func(r *Runtime) { r.dialTimeout = d } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(r *Runtime) { r.log = l } }

// WithClock sets the clock recorded start and end times come from.
func WithClock(c clock.Clock) Option { return func(r *Runtime) { r.clock = c } }
