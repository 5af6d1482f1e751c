package client

import (
	"context"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
)

// WatchEndpointServiceConfig is the service config for a connection to a
// watch endpoint: calls go round robin over every address the endpoint's
// name resolves to (the watchcache replicas behind one DNS name), so one
// replica that dies or is not ready leaves the others.
const WatchEndpointServiceConfig = `{"loadBalancingConfig":[{"round_robin":{}}]}`

// WithWatchEndpoint returns a connection that sends every List and Watch
// to watch (the watchcache replicas) and every other call to api. A List
// or Watch the replicas cannot take — unreachable, or not ready (503) — is
// made on api instead, so clients keep working without the replicas; the
// revisions are etcd's either way, so a list from one and a watch from the
// other fit together. Informers built on the returned connection (through
// ListWatch) list and watch through the replicas and write to api.
func WithWatchEndpoint(api, watch grpc.ClientConnInterface) grpc.ClientConnInterface {
	return &splitConn{api: api, watch: watch}
}

type splitConn struct{ api, watch grpc.ClientConnInterface }

var _ grpc.ClientConnInterface = (*splitConn)(nil)

func isRead(method string) bool {
	return strings.HasSuffix(method, "/List") || strings.HasSuffix(method, "/Watch")
}

// fallsBack reports whether a replica's answer sends the call to api.
func fallsBack(err error) bool { return err != nil && status.Code(err) == codes.Unavailable }

func (c *splitConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if isRead(method) {
		if err := c.watch.Invoke(ctx, method, args, reply, opts...); !fallsBack(err) {
			return err
		}
	}
	return c.api.Invoke(ctx, method, args, reply, opts...)
}

func (c *splitConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if !isRead(method) {
		return c.api.NewStream(ctx, desc, method, opts...)
	}
	s, err := c.watch.NewStream(ctx, desc, method, opts...)
	if fallsBack(err) {
		return c.api.NewStream(ctx, desc, method, opts...)
	}
	if err != nil {
		return nil, err
	}
	return &fallbackStream{ClientStream: s, ctx: ctx, desc: desc, method: method, opts: opts, api: c.api}, nil
}

// fallbackStream is a watch on a replica that moves to api when the
// replica refuses it before it opens (a replica that is not ready answers
// 503 without headers). Its requests are kept until then, to send again.
type fallbackStream struct {
	grpc.ClientStream
	ctx    context.Context
	desc   *grpc.StreamDesc
	method string
	opts   []grpc.CallOption
	api    grpc.ClientConnInterface

	once    sync.Once
	sent    []any
	closed  bool
	pending []byte // a message read while looking at the replica's answer
	err     error  // the replica's answer, when it was an error to keep
}

func (f *fallbackStream) SendMsg(m any) error {
	f.sent = append(f.sent, m)
	return f.ClientStream.SendMsg(m)
}

func (f *fallbackStream) CloseSend() error {
	f.closed = true
	return f.ClientStream.CloseSend()
}

// Header decides, once, whether the replica took the watch.
func (f *fallbackStream) Header() (metadata.MD, error) {
	var md metadata.MD
	var err error
	f.once.Do(func() { md, err = f.decide() })
	if err != nil || md != nil {
		return md, err
	}
	return f.ClientStream.Header()
}

func (f *fallbackStream) decide() (metadata.MD, error) {
	md, err := f.ClientStream.Header()
	if err == nil && len(md) > 0 {
		return md, nil
	}
	if err == nil {
		// Ended without headers: its status says why.
		probe := &emptypb.Empty{}
		if err = f.ClientStream.RecvMsg(probe); err == nil {
			f.pending = probe.ProtoReflect().GetUnknown()
			return md, nil
		}
	}
	if !fallsBack(err) {
		f.err = err // RecvMsg returns it, as a stream that ended does
		return md, nil
	}
	s, err := f.api.NewStream(f.ctx, f.desc, f.method, f.opts...)
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

func (f *fallbackStream) RecvMsg(m any) error {
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
	return f.ClientStream.RecvMsg(m)
}

// DialWatchEndpoint connects to the watchcache replicas at target
// (host:port): every address the name resolves to, round robin. opts are
// the caller's usual dial options (credentials, stats handler).
func DialWatchEndpoint(target string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	opts = append(opts, grpc.WithDefaultServiceConfig(WatchEndpointServiceConfig),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxListBytes)))
	return grpc.NewClient("dns:///"+target, opts...)
}
