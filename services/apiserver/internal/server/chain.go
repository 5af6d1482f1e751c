package server

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"net"
	"net/http"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/services/apiserver/internal/audit"
	"podline.dev/services/apiserver/internal/authn"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

// forwardedMetadata carries what the REST filter learnt (the user, the
// request's URI, source address and user agent) over the in-process
// connection as "<secret>:<json>"; only the in-process server reads it.
const forwardedMetadata = "x-podline-forwarded-request"

// forwarded is the wire form of the REST filter's findings.
type forwarded struct {
	User         *forwardedUser `json:"user,omitempty"`
	Impersonator *forwardedUser `json:"impersonator,omitempty"`
	URI          string         `json:"uri,omitempty"`
	SourceIP     string         `json:"sourceIP,omitempty"`
	UserAgent    string         `json:"userAgent,omitempty"`
}

type forwardedUser struct {
	Name   string              `json:"name"`
	UID    string              `json:"uid,omitempty"`
	Groups []string            `json:"groups,omitempty"`
	Extra  map[string][]string `json:"extra,omitempty"`
}

func toForwarded(u *request.User) *forwardedUser {
	return &forwardedUser{Name: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
}

func (f *forwardedUser) user() *request.User {
	if f == nil {
		return nil
	}
	return &request.User{Name: f.Name, UID: f.UID, Groups: f.Groups, Extra: f.Extra}
}

// forward is the in-process client's interceptor: it copies the user and
// request info the REST filter put in ctx into the call's metadata.
func (s *Server) forward(ctx context.Context) context.Context {
	if s.auth == nil {
		return ctx
	}
	f := forwarded{}
	i := request.InfoFrom(ctx)
	f.URI, f.SourceIP, f.UserAgent = i.URI, i.SourceIP, i.UserAgent
	if u, ok := request.UserFrom(ctx); ok {
		f.User = toForwarded(u)
	}
	if i.Impersonator != nil {
		f.Impersonator = toForwarded(i.Impersonator)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, forwardedMetadata, s.auth.secret+":"+string(b))
}

func (s *Server) forwardUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return invoker(s.forward(ctx), method, req, reply, cc, opts...)
}

func (s *Server) forwardStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(s.forward(ctx), desc, cc, method, opts...)
}

// forwardedFrom reads what the REST filter forwarded; a value without this
// process's secret (a client's forged header) is ignored.
func (s *Server) forwardedFrom(ctx context.Context) (forwarded, bool) {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get(forwardedMetadata) {
		secret, body, ok := strings.Cut(v, ":")
		if !ok || subtle.ConstantTimeCompare([]byte(secret), []byte(s.auth.secret)) != 1 {
			continue
		}
		var f forwarded
		if json.Unmarshal([]byte(body), &f) == nil {
			return f, true
		}
	}
	return forwarded{}, false
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

// peerInfo is the audit view of a native gRPC call.
func peerInfo(ctx context.Context, method string) request.Info {
	i := request.Info{URI: method}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		i.SourceIP = p.Addr.String()
		if host, _, err := net.SplitHostPort(i.SourceIP); err == nil {
			i.SourceIP = host
		}
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if ua := md.Get("user-agent"); len(ua) > 0 {
		i.UserAgent = ua[0]
	}
	return i
}

// identify returns ctx carrying the caller and the request's info: what
// the REST filter forwarded on the in-process server (trusted), the TLS
// peer or bearer token otherwise. With authentication off it only fills in
// the info.
func (s *Server) identify(ctx context.Context, trusted bool, method string) (context.Context, error) {
	if trusted {
		f, ok := s.forwardedFrom(ctx)
		if ok {
			ctx = request.WithInfo(ctx, request.Info{URI: f.URI, SourceIP: f.SourceIP, UserAgent: f.UserAgent, Impersonator: f.Impersonator.user()})
		}
		if !ok || f.User == nil {
			if s.auth.authorizer == nil {
				return ctx, nil
			}
			return ctx, apierrors.NewUnauthorized("")
		}
		return request.WithUser(ctx, f.User.user()), nil
	}
	ctx = request.WithInfo(ctx, peerInfo(ctx, method))
	if s.auth.authorizer == nil {
		return ctx, nil
	}
	u, err := authn.Traced(ctx, s.auth.authn, peerCredentials(ctx))
	if err != nil {
		return ctx, apierrors.NewUnauthorized("")
	}
	return request.WithUser(ctx, u), nil
}

// attributes describe a call of fullMethod; a method of no resource's
// service is a non-resource request on the method's path.
func attributes(ctx context.Context, fullMethod string, req any) authz.Attributes {
	a, ok := authz.FromGRPC(fullMethod, req)
	if !ok {
		a = authz.Attributes{Verb: "post", Path: fullMethod}
	}
	a.User, _ = request.UserFrom(ctx)
	return a
}

// authorize checks a, when authorization is on.
func (s *Server) authorize(ctx context.Context, a authz.Attributes) error {
	if s.auth.authorizer == nil {
		return nil
	}
	return authz.Check(ctx, s.auth.authorizer, a)
}

// startAudit begins the audit record of a call (nil when not audited).
func (s *Server) startAudit(ctx context.Context, a authz.Attributes, req any) *audit.Record {
	i := request.InfoFrom(ctx)
	m, _ := req.(proto.Message)
	return s.auth.audit.Start(ctx, a, audit.Meta{URI: i.URI, SourceIP: i.SourceIP, UserAgent: i.UserAgent, Impersonator: i.Impersonator}, m)
}

// responseStatus is the audit view of a call's outcome.
func responseStatus(method string, err error) audit.ResponseStatus {
	if err == nil {
		if strings.HasSuffix(method, "/Create") {
			return audit.ResponseStatus{Code: http.StatusCreated}
		}
		return audit.ResponseStatus{Code: http.StatusOK}
	}
	st := apierrors.FromError(err).Status()
	return audit.ResponseStatus{Code: int(st.GetCode()), Status: st.GetStatus(), Reason: st.GetReason(), Message: st.GetMessage()}
}

// unaryInterceptor authenticates, audits and authorizes unary calls.
func (s *Server) unaryInterceptor(trusted bool) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if s.auth == nil {
			return handler(ctx, req)
		}
		ctx, err := s.identify(ctx, trusted, info.FullMethod)
		a := attributes(ctx, info.FullMethod, req)
		rec := s.startAudit(ctx, a, req)
		if err == nil {
			err = s.authorize(ctx, a)
		}
		if err != nil {
			rec.Complete(responseStatus(info.FullMethod, err), nil)
			return nil, err
		}
		resp, err := handler(ctx, req)
		m, _ := resp.(proto.Message)
		rec.Complete(responseStatus(info.FullMethod, err), m)
		return resp, err
	}
}

// streamInterceptor authenticates a stream at once, and audits and
// authorizes it when its request (the first message) arrives.
func (s *Server) streamInterceptor(trusted bool) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if s.auth == nil {
			return handler(srv, ss)
		}
		ctx, err := s.identify(ss.Context(), trusted, info.FullMethod)
		if err != nil {
			s.startAudit(ctx, attributes(ctx, info.FullMethod, nil), nil).Complete(responseStatus(info.FullMethod, err), nil)
			return err
		}
		w := &authorizedStream{ServerStream: ss, ctx: ctx, s: s, method: info.FullMethod}
		err = handler(srv, w)
		w.rec.Complete(responseStatus(info.FullMethod, err), nil)
		return err
	}
}

// authorizedStream audits and authorizes the stream on its first message.
type authorizedStream struct {
	grpc.ServerStream
	ctx     context.Context
	s       *Server
	method  string
	checked bool
	rec     *audit.Record
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
	a := attributes(w.ctx, w.method, m)
	w.rec = w.s.startAudit(w.ctx, a, m)
	if err := w.s.authorize(w.ctx, a); err != nil {
		return err
	}
	w.rec.Started(http.StatusOK)
	return nil
}
