package cri

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podline.dev/services/kubelet/internal/runtime"
)

// DefaultEndpoint is podline's CRI runtime's socket.
const DefaultEndpoint = "unix:///run/podline/cri.sock"

// maxMsgSize is the largest CRI message (16 MiB, as the kubelet's).
const maxMsgSize = 16 << 20

// Runtime is a runtime.Runtime over CRI.
type Runtime struct {
	rt     criv1.RuntimeServiceClient
	img    criv1.ImageServiceClient
	conns  []*grpc.ClientConn
	log    *slog.Logger
	dialer streamDialer

	mu sync.Mutex
	// sandboxIPs caches PodSandboxStatus's IPs: a sandbox keeps its
	// addresses for its life.
	sandboxIPs map[string][]string
	// statuses caches ContainerStatus by container ID while the state
	// List reports is the state the cached status has.
	statuses map[string]*criv1.ContainerStatus
}

var _ runtime.Runtime = (*Runtime)(nil)

// Option configures New.
type Option func(*options)

type options struct {
	imageEndpoint string
	log           *slog.Logger
	dialOpts      []grpc.DialOption
	dialer        streamDialer
}

// WithImageEndpoint serves images from another socket (default: the
// runtime's).
func WithImageEndpoint(ep string) Option { return func(o *options) { o.imageEndpoint = ep } }

// WithLogger logs to l.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithStreamDialContext dials the runtime's streaming server with dial
// (default: a net.Dialer here; tests dial inside the node's network
// namespace).
func WithStreamDialContext(dial func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(o *options) {
		o.dialer = func(ctx context.Context, rawURL string, protocols []string) (*websocket.Conn, error) {
			return dialStream(ctx, rawURL, protocols, dial)
		}
	}
}

// WithDialOptions adds gRPC dial options (tests dial a bufconn).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dialOpts = append(o.dialOpts, opts...) }
}

// New connects to the runtime at endpoint ("unix:///run/podline/cri.sock"
// or a bare path). Connecting is lazy: a runtime that is not up yet makes
// calls fail until it is.
func New(endpoint string, opts ...Option) (*Runtime, error) {
	o := options{log: slog.Default()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.imageEndpoint == "" {
		o.imageEndpoint = endpoint
	}
	dial := func(ep string) (*grpc.ClientConn, error) {
		target, err := Target(ep)
		if err != nil {
			return nil, err
		}
		return grpc.NewClient(target, append([]grpc.DialOption{
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithStatsHandler(otelgrpc.NewClientHandler()),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)),
		}, o.dialOpts...)...)
	}
	r := &Runtime{log: o.log, dialer: o.dialer, sandboxIPs: map[string][]string{}, statuses: map[string]*criv1.ContainerStatus{}}
	rc, err := dial(endpoint)
	if err != nil {
		return nil, fmt.Errorf("runtime endpoint %s: %w", endpoint, err)
	}
	r.conns = append(r.conns, rc)
	ic := rc
	if o.imageEndpoint != endpoint {
		if ic, err = dial(o.imageEndpoint); err != nil {
			rc.Close()
			return nil, fmt.Errorf("image endpoint %s: %w", o.imageEndpoint, err)
		}
		r.conns = append(r.conns, ic)
	}
	r.rt, r.img = criv1.NewRuntimeServiceClient(rc), criv1.NewImageServiceClient(ic)
	if r.dialer == nil {
		r.dialer = defaultStreamDialer
	}
	return r, nil
}

// Target is the gRPC target of a CRI endpoint: unix:///path (a bare
// path is a unix socket too).
func Target(ep string) (string, error) {
	switch {
	case strings.HasPrefix(ep, "unix://"):
		return ep, nil
	case strings.HasPrefix(ep, "/"):
		return "unix://" + ep, nil
	}
	return "", fmt.Errorf("%q: %w", ep, ErrEndpoint)
}

// Close closes the connections.
func (r *Runtime) Close() error {
	var errs []error
	for _, c := range r.conns {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

func (r *Runtime) Version(ctx context.Context) (string, string, error) {
	resp, err := r.rt.Version(ctx, &criv1.VersionRequest{Version: "v1"})
	if err != nil {
		return "", "", wrap(err, "version")
	}
	return resp.GetRuntimeName(), resp.GetRuntimeVersion(), nil
}

// Status reads the runtime's RuntimeReady and NetworkReady conditions.
func (r *Runtime) Status(ctx context.Context) error {
	resp, err := r.rt.Status(ctx, &criv1.StatusRequest{})
	if err != nil {
		return fmt.Errorf("%w: %v", runtime.ErrRuntimeNotReady, err)
	}
	ready := map[string]*criv1.RuntimeCondition{}
	for _, c := range resp.GetStatus().GetConditions() {
		ready[c.GetType()] = c
	}
	if c := ready[criv1.RuntimeReady]; c == nil || !c.GetStatus() {
		return fmt.Errorf("%w: RuntimeReady=false reason:%s message:%s", runtime.ErrRuntimeNotReady, c.GetReason(), c.GetMessage())
	}
	if c := ready[criv1.NetworkReady]; c == nil || !c.GetStatus() {
		return fmt.Errorf("%w: NetworkReady=false reason:%s message:%s", runtime.ErrNetworkNotReady, c.GetReason(), c.GetMessage())
	}
	return nil
}

func (r *Runtime) UpdatePodCIDR(ctx context.Context, cidr string) error {
	_, err := r.rt.UpdateRuntimeConfig(ctx, &criv1.UpdateRuntimeConfigRequest{
		RuntimeConfig: &criv1.RuntimeConfig{NetworkConfig: &criv1.NetworkConfig{PodCidr: cidr}},
	})
	return wrap(err, "update runtime config")
}

// wrap names the call and maps CRI's codes to the runtime's sentinels.
func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	switch status.Code(err) {
	case codes.NotFound:
		return fmt.Errorf("%s: %w: %s", what, runtime.ErrNotFound, status.Convert(err).Message())
	case codes.Unavailable:
		return fmt.Errorf("%s: %w: %s", what, runtime.ErrRuntimeNotReady, status.Convert(err).Message())
	}
	return fmt.Errorf("%s: %w", what, err)
}

func notFound(err error) bool { return status.Code(err) == codes.NotFound }

func seconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d > 0 && s == 0 {
		s = 1
	}
	return s
}
