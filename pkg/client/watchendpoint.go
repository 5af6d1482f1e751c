package client

import (
	"context"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/health" // client-side health checks of the replicas (WatchEndpointServiceConfig)
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"podline.dev/pkg/clock"
)

// WatchEndpointServiceConfig is the service config for a connection to a
// watch endpoint: calls go round robin over every address the endpoint's
// name resolves to (the watchcache replicas behind one DNS name), only to
// the replicas whose grpc.health.v1 status is SERVING, so one replica
// that dies or is not ready leaves the others; with none left, calls fail
// at once with Unavailable and WithWatchEndpoint falls back.
const WatchEndpointServiceConfig = `{"loadBalancingConfig":[{"round_robin":{}}],"healthCheckConfig":{"serviceName":""}}`

// Default backoff of WithWatchEndpoint; see WithReturnBackoff.
const (
	DefaultReturnBackoff    = time.Second
	DefaultMaxReturnBackoff = time.Minute
)

// WatchEndpointOption configures WithWatchEndpoint.
type WatchEndpointOption func(*splitConn)

// WithReturnBackoff sets how long reads stay on the apiserver after the
// watch endpoint failed: initial after a first failure, doubled after
// each further one up to max, each stretched by up to a fifth at random
// so that many clients do not come back in step.
func WithReturnBackoff(initial, max time.Duration) WatchEndpointOption {
	return func(c *splitConn) { c.initial, c.max = initial, max }
}

// WithWatchEndpoint returns a connection that sends every List and Watch
// to watch (the watchcache replicas) and every other call to api. A List
// or Watch the replicas cannot take — unreachable, or not ready (503) — is
// made on api instead, so clients keep working without the replicas; the
// revisions are etcd's either way, so a list from one and a watch from the
// other fit together. Informers built on the returned connection (through
// ListWatch) list and watch through the replicas and write to api.
//
// After a failure of the replicas (including a watch they end with 503
// when they lose their feed) reads go straight to api for a backoff
// (WithReturnBackoff). When it is over, a watch that fell back to api
// ends cleanly, so its client watches again from the last resourceVersion
// it saw — through the replicas if they serve again, on api for a longer
// backoff if not. Nothing is missed or seen twice: each watch resumes
// where its client left off.
func WithWatchEndpoint(api, watch grpc.ClientConnInterface, opts ...WatchEndpointOption) grpc.ClientConnInterface {
	c := &splitConn{api: api, watch: watch, initial: DefaultReturnBackoff, max: DefaultMaxReturnBackoff, clock: clock.Real{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

type splitConn struct {
	api, watch   grpc.ClientConnInterface
	initial, max time.Duration
	clock        clock.Clock

	mu      sync.Mutex
	backoff time.Duration // 0 while the replicas answer
	until   time.Time     // reads go to api until then
}

var _ grpc.ClientConnInterface = (*splitConn)(nil)

func isRead(method string) bool {
	return strings.HasSuffix(method, "/List") || strings.HasSuffix(method, "/Watch")
}

// fallsBack reports whether a replica's answer sends the call to api.
func fallsBack(err error) bool { return err != nil && status.Code(err) == codes.Unavailable }

// useReplicas reports whether a read may try the replicas now.
func (c *splitConn) useReplicas() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.clock.Now().Before(c.until)
}

// failed starts or lengthens the backoff. Failures of calls made before
// the current backoff began (many watches that end together) count once.
func (c *splitConn) failed() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	if now.Before(c.until) {
		return
	}
	c.backoff = min(max(c.backoff*2, c.initial), c.max)
	c.until = now.Add(c.backoff + time.Duration(rand.Float64()*float64(c.backoff)/5))
}

func (c *splitConn) succeeded() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.backoff, c.until = 0, time.Time{}
}

func (c *splitConn) returnAt() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.until
}

func (c *splitConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if isRead(method) && c.useReplicas() {
		err := c.watch.Invoke(ctx, method, args, reply, opts...)
		if !fallsBack(err) {
			c.succeeded()
			return err
		}
		c.failed()
	}
	return c.api.Invoke(ctx, method, args, reply, opts...)
}

func (c *splitConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if !isRead(method) {
		return c.api.NewStream(ctx, desc, method, opts...)
	}
	if !c.useReplicas() {
		return c.fallbackStream(ctx, desc, method, opts...)
	}
	s, err := c.watch.NewStream(ctx, desc, method, opts...)
	if fallsBack(err) {
		c.failed()
		return c.fallbackStream(ctx, desc, method, opts...)
	}
	if err != nil {
		return nil, err
	}
	return &replicaStream{ClientStream: s, ctx: ctx, desc: desc, method: method, opts: opts, conn: c}, nil
}

// fallbackStream opens the watch on api, to end cleanly when the backoff
// is over (but not sooner than the initial backoff from now), so that its
// client comes back to the replicas.
func (c *splitConn) fallbackStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	sctx, cancel := context.WithCancel(ctx)
	s, err := c.api.NewStream(sctx, desc, method, opts...)
	if err != nil {
		cancel()
		return nil, err
	}
	r := &recalledStream{ClientStream: s, cancel: cancel}
	r.timer = time.AfterFunc(max(c.returnAt().Sub(c.clock.Now()), c.initial), func() {
		r.due.Store(true)
		if r.open.Load() {
			r.recall()
		}
	})
	return r, nil
}

// recalledStream is a watch on api that ends with io.EOF, as a watch
// whose timeout passed, once its time is up and the watch is open (a
// watch still opening is let open first, so it does not fail).
type recalledStream struct {
	grpc.ClientStream
	cancel    context.CancelFunc
	timer     *time.Timer
	due, open atomic.Bool
	recalled  atomic.Bool
}

func (r *recalledStream) recall() {
	r.recalled.Store(true)
	r.cancel()
}

func (r *recalledStream) Header() (metadata.MD, error) {
	md, err := r.ClientStream.Header()
	if err == nil && len(md) > 0 {
		r.open.Store(true)
		if r.due.Load() {
			r.recall()
		}
	}
	return md, err
}

func (r *recalledStream) RecvMsg(m any) error {
	err := r.ClientStream.RecvMsg(m)
	if err == nil {
		return nil
	}
	r.timer.Stop()
	r.cancel()
	if r.recalled.Load() {
		return io.EOF
	}
	return err
}

// replicaStream is a watch on a replica that moves to api when the
// replica refuses it before it opens (a replica that is not ready answers
// 503 without headers). Its requests are kept until then, to send again.
type replicaStream struct {
	grpc.ClientStream
	ctx    context.Context
	desc   *grpc.StreamDesc
	method string
	opts   []grpc.CallOption
	conn   *splitConn

	once    sync.Once
	sent    []any
	closed  bool
	replica bool   // the replica took the watch
	pending []byte // a message read while looking at the replica's answer
	err     error  // the replica's answer, when it was an error to keep
}

func (f *replicaStream) SendMsg(m any) error {
	f.sent = append(f.sent, m)
	return f.ClientStream.SendMsg(m)
}

func (f *replicaStream) CloseSend() error {
	f.closed = true
	return f.ClientStream.CloseSend()
}

// Header decides, once, whether the replica took the watch.
func (f *replicaStream) Header() (metadata.MD, error) {
	var md metadata.MD
	var err error
	f.once.Do(func() { md, err = f.decide() })
	if err != nil || md != nil {
		return md, err
	}
	return f.ClientStream.Header()
}

func (f *replicaStream) decide() (metadata.MD, error) {
	md, err := f.ClientStream.Header()
	if err == nil && len(md) > 0 {
		f.replica = true
		f.conn.succeeded()
		return md, nil
	}
	if err == nil {
		// Ended without headers: its status says why.
		probe := &emptypb.Empty{}
		if err = f.ClientStream.RecvMsg(probe); err == nil {
			f.replica = true
			f.pending = probe.ProtoReflect().GetUnknown()
			return md, nil
		}
	}
	if !fallsBack(err) {
		f.err = err // RecvMsg returns it, as a stream that ended does
		return md, nil
	}
	f.conn.failed()
	s, err := f.conn.fallbackStream(f.ctx, f.desc, f.method, f.opts...)
	if err != nil {
		return nil, err
	}
	for _, m := range f.sent {
		if err := s.SendMsg(m); err != nil {
			return nil, err
		}
	}
	if f.closed {
		if err := s.CloseSend(); err != nil {
			return nil, err
		}
	}
	f.ClientStream = s
	return s.Header()
}

func (f *replicaStream) RecvMsg(m any) error {
	f.once.Do(func() {
		if _, err := f.decide(); err != nil {
			f.err = err
		}
	})
	if f.err != nil {
		return f.err
	}
	if f.pending != nil {
		b := f.pending
		f.pending = nil
		return proto.Unmarshal(b, m.(proto.Message))
	}
	err := f.ClientStream.RecvMsg(m)
	if f.replica && fallsBack(err) {
		// The replica stopped serving (it lost its feed): the client's
		// next watch goes to api at once.
		f.conn.failed()
	}
	return err
}

// DialWatchEndpoint connects to the watchcache replicas at target
// (host:port): every address the name resolves to, round robin, healthy
// ones only. opts are the caller's usual dial options (credentials, stats
// handler).
func DialWatchEndpoint(target string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	opts = append(opts, grpc.WithDefaultServiceConfig(WatchEndpointServiceConfig),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxListBytes)))
	return grpc.NewClient("dns:///"+target, opts...)
}
