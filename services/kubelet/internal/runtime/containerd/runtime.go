package containerd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/errdefs"
	"github.com/containerd/errdefs/pkg/errgrpc"
	"golang.org/x/sync/singleflight"

	"podline.dev/pkg/clock"
	"podline.dev/services/kubelet/internal/runtime"
)

// Runtime is runtime.Runtime on containerd.
type Runtime struct {
	client       *containerd.Client
	namespace    string
	sandboxImage string
	snapshotter  string
	netnsDir     string
	hostsDir     string
	fifoDir      string
	cgroupParent string
	dialTimeout  time.Duration
	log          *slog.Logger
	clock        clock.Clock
	pulls        singleflight.Group
}

var _ runtime.Runtime = (*Runtime)(nil)

// New connects to containerd at address (a unix socket path).
func New(address string, opts ...Option) (*Runtime, error) {
	r := &Runtime{
		namespace:    "k8s.io",
		sandboxImage: "podline/pause:3.10",
		snapshotter:  "overlayfs",
		netnsDir:     "/var/run/netns",
		hostsDir:     "/etc/containerd/certs.d",
		fifoDir:      "/run/podline/fifo",
		cgroupParent: "/podline",
		dialTimeout:  10 * time.Second,
		log:          slog.Default(),
		clock:        clock.Real{},
	}
	for _, o := range opts {
		o(r)
	}
	c, err := containerd.New(address, containerd.WithDefaultNamespace(r.namespace), containerd.WithTimeout(r.dialTimeout))
	if err != nil {
		return nil, fmt.Errorf("connect to containerd at %s: %w", address, err)
	}
	r.client = c
	return r, nil
}

// Client is the containerd client (tests import images with it).
func (r *Runtime) Client() *containerd.Client { return r.client }

// Close closes the connection.
func (r *Runtime) Close() error { return r.client.Close() }

// Version asks containerd its version.
func (r *Runtime) Version(ctx context.Context) (string, string, error) {
	v, err := r.client.Version(ctx)
	if err != nil {
		return "", "", err
	}
	return "containerd", v.Version, nil
}

func newID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// notFound maps containerd's not-found to the runtime's sentinel.
func notFound(err error, what string) error {
	if isNotFound(err) {
		return fmt.Errorf("%s: %w", what, runtime.ErrNotFound)
	}
	return err
}

// isNotFound also reads the gRPC status of the raw services (tasks).
func isNotFound(err error) bool {
	return errdefs.IsNotFound(err) || errdefs.IsNotFound(errgrpc.ToNative(err)) || errors.Is(err, runtime.ErrNotFound)
}
