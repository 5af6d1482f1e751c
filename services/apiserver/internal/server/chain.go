package server

import (
	"context"
	"encoding/json"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"podline.dev/pkg/apierrors"
	"podline.dev/services/apiserver/internal/authn"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

// userMetadata carries the REST filter's user over the in-process
// connection as "<secret>:<json>"; only the in-process server reads it.
const userMetadata = "x-podline-authenticated-user"

// trustedUser is the wire form of request.User.
type trustedUser struct {
	Name   string              `json:"name"`
	UID    string              `json:"uid,omitempty"`
	Groups []string            `json:"groups,omitempty"`
	Extra  map[string][]string `json:"extra,omitempty"`
}

// forwardUser is the in-process client's interceptor: it copies the user
// the REST filter put in ctx into the call's metadata.
func (s *Server) forwardUser(ctx context.Context) context.Context {
	if s.auth == nil {
		return ctx
	}
	u, ok := request.UserFrom(ctx)
	if !ok {
		return ctx
	}
	b, err := json.Marshal(trustedUser{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra})
	if err != nil {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, userMetadata, s.auth.secret+":"+string(b))
}

func (s *Server) forwardUserUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(s.forwardUser(ctx), method, req, reply, cc, opts...)
}

func (s *Server) forwardUserStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(s.forwardUser(ctx), desc, cc, method, opts...)
}

// trustedUserFrom reads the user the REST filter forwarded; a value
// without this process's secret (a client's forged header) is ignored.
func (s *Server) trustedUserFrom(ctx context.Context) (*request.User, bool) {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get(userMetadata) {
		secret, body, ok := strings.Cut(v, ":")
		if !ok || secret != s.auth.secret {
			continue
		}
		var tu trustedUser
		if json.Unmarshal([]byte(body), &tu) != nil {
			continue
		}
		return &request.User{Name: tu.Name, UID: tu.UID, Groups: tu.Groups, Extra: tu.Extra}, true
	}
	return nil, false
}

// peerCredentials are the TLS client chain and bearer token of a gRPC call.
func peerCredentials(ctx context.Context) authn.Credentials {
	var c authn.Credentials
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			c.PeerCertificates = ti.State.PeerCertificates
		}
	}
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		if tok := authn.BearerToken(v); tok != "" {
			c.BearerToken = tok
			break
		}
	}
	return c
}

// authenticate returns ctx carrying the caller: the forwarded user on the
// in-process server (trusted), the TLS peer or bearer token otherwise.
func (s *Server) authenticate(ctx context.Context, trusted bool) (context.Context, error) {
	if trusted {
		if u, ok := s.trustedUserFrom(ctx); ok {
			return request.WithUser(ctx, u), nil
		}
		return nil, apierrors.NewUnauthorized("")
	}
	u, err := authn.Traced(ctx, s.auth.authn, peerCredentials(ctx))
	if err != nil {
		return nil, apierrors.NewUnauthorized("")
	}
	return request.WithUser(ctx, u), nil
}

// authorize checks a call of fullMethod with its decoded request. A method
// of no resource's service is checked as a non-resource path.
func (s *Server) authorize(ctx context.Context, fullMethod string, req any) error {
	a, ok := authz.FromGRPC(fullMethod, req)
	if !ok {
		a = authz.Attributes{Verb: "post", Path: fullMethod}
	}
	a.User, _ = request.UserFrom(ctx)
	return authz.Check(ctx, s.auth.authorizer, a)
}

// unaryInterceptor authenticates and authorizes unary calls.
func (s *Server) unaryInterceptor(trusted bool) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if s.auth == nil {
			return handler(ctx, req)
		}
		ctx, err := s.authenticate(ctx, trusted)
		if err != nil {
			return nil, err
		}
		if err := s.authorize(ctx, info.FullMethod, req); err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
}

// streamInterceptor authenticates a stream at once and authorizes it when
// its request (the first message) arrives.
func (s *Server) streamInterceptor(trusted bool) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if s.auth == nil {
			return handler(srv, ss)
		}
		ctx, err := s.authenticate(ss.Context(), trusted)
		if err != nil {
			return err
		}
		return handler(srv, &authorizedStream{ServerStream: ss, ctx: ctx, s: s, method: info.FullMethod})
	}
}

// authorizedStream authorizes the stream on its first received message.
type authorizedStream struct {
	grpc.ServerStream
	ctx     context.Context
	s       *Server
	method  string
	checked bool
}

func (w *authorizedStream) Context() context.Context { return w.ctx }

func (w *authorizedStream) RecvMsg(m any) error {
	if err := w.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if w.checked {
		return nil
	}
	w.checked = true
	return w.s.authorize(w.ctx, w.method, m)
}
