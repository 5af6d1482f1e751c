package serve

import (
	"context"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/grpcdyn"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watchcache"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
)

// Upstream is the apiserver for the lists a replica forwards.
type Upstream interface {
	List(ctx context.Context, opts *metav1.ListRequest) ([]object.Object, *metav1.ListMeta, error)
}

// Resource is one resource a replica serves.
type Resource struct {
	Res   apis.Resource
	Cache *watchcache.Cache
	Up    Upstream
}

// Gate is asked before every List and Watch.
type Gate interface {
	// Serving returns a channel that is closed when the replica stops
	// serving (it lost its feed), which ends every open watch with 503;
	// or the 503 of a replica that does not serve now.
	Serving() (<-chan struct{}, error)
	// Admit authorizes the request (verb "list" or "watch"): nil, or the
	// error to answer, 403 for a client not allowed to read what it asks.
	Admit(ctx context.Context, res apis.Resource, verb string, req *metav1.ListRequest) error
}

// Register adds the service of each resource to s, a server built with
// ServerOptions.
func Register(s grpc.ServiceRegistrar, rs []Resource, gate Gate) error {
	for _, r := range rs {
		sd, err := serviceDesc(r, gate)
		if err != nil {
			return err
		}
		s.RegisterService(sd, nil)
	}
	return nil
}

type handler struct {
	Resource
	gate Gate
	memo grpcdyn.EventMemo // needs grpcdyn.ServerCodec
	msgs grpcdyn.Messages
}

func serviceDesc(r Resource, gate Gate) (*grpc.ServiceDesc, error) {
	h := &handler{Resource: r, gate: gate}
	var err error
	if h.msgs, err = grpcdyn.MessagesOf(r.Res); err != nil {
		return nil, err
	}
	unary := func(method string) (grpcdyn.UnaryFunc, error) {
		if method == "List" {
			return h.listCall, nil
		}
		return h.notServed(method), nil
	}
	return grpcdyn.ServiceDesc(r.Res, unary, func(protoreflect.MessageType) grpc.StreamHandler { return h.watch })
}

func (h *handler) gr() apierrors.GroupResource {
	return apierrors.GroupResource{Group: h.Res.Group.Name, Resource: h.Res.Name}
}

func (h *handler) notServed(method string) grpcdyn.UnaryFunc {
	return func(context.Context, proto.Message) (proto.Message, error) {
		return nil, apierrors.NewMethodNotSupported(h.gr(), method+" on a watchcache replica (write to the apiserver)")
	}
}

func (h *handler) listCall(ctx context.Context, msg proto.Message) (proto.Message, error) {
	req := msg.(*metav1.ListRequest)
	if _, err := h.gate.Serving(); err != nil {
		return nil, err
	}
	if err := h.gate.Admit(ctx, h.Res, "list", req); err != nil {
		return nil, err
	}
	if req.GetLimit() > 0 || req.GetContinue() != "" || req.GetResourceVersionMatch() == "Exact" {
		items, lm, err := h.Up.List(ctx, req)
		if err != nil {
			return nil, err
		}
		return h.msgs.List(items, lm), nil
	}
	f, err := filter(h.Res, req)
	if err != nil {
		return nil, err
	}
	rv, err := resourceVersion(req.GetResourceVersion())
	if err != nil {
		return nil, err
	}
	if req.GetResourceVersion() == "" {
		// A consistent read: at least the revision etcd is at now.
		_, lm, err := h.Up.List(ctx, &metav1.ListRequest{Limit: 1})
		if err != nil {
			return nil, err
		}
		if rv, err = resourceVersion(lm.GetResourceVersion()); err != nil {
			return nil, err
		}
	}
	if err := h.Cache.WaitUntilFresh(ctx, rv); err != nil {
		return nil, err
	}
	items, rev := h.Cache.List(f)
	return h.msgs.List(items, &metav1.ListMeta{ResourceVersion: strconv.FormatInt(rev, 10)}), nil
}

// errStopped ends the watches of a replica that stopped serving.
var errStopped = apierrors.NewServiceUnavailable("the watchcache replica lost its feed and stopped serving; watch again from the last resourceVersion (another replica or the apiserver)")

// watch serves Watch from the cache: the watch opens (or fails, a 410
// before any header), the header tells the client so, then events flow
// until the watch, its timeout or the client ends, or the replica stops
// serving (503).
func (h *handler) watch(_ any, stream grpc.ServerStream) error {
	req := &metav1.ListRequest{}
	if err := stream.RecvMsg(req); err != nil {
		return err
	}
	ctx := stream.Context()
	stopped, err := h.gate.Serving()
	if err != nil {
		return err
	}
	if err := h.gate.Admit(ctx, h.Res, "watch", req); err != nil {
		return err
	}
	f, err := filter(h.Res, req)
	if err != nil {
		return err
	}
	rv, err := resourceVersion(req.GetResourceVersion())
	if err != nil {
		return err
	}
	if t := req.GetTimeoutSeconds(); req.TimeoutSeconds != nil && t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(t)*time.Second)
		defer cancel()
	}
	w, err := h.Cache.Watch(ctx, rv, f, req.GetAllowWatchBookmarks())
	if err != nil {
		return err
	}
	defer w.Stop()
	if err := stream.SendHeader(metadata.Pairs(client.WatchOpenHeader, "open")); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-stopped:
			return errStopped
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil
			}
			msg, err := h.memo.Message(ev, h.msgs)
			if err != nil {
				return apierrors.NewInternalError(err)
			}
			if err := stream.SendMsg(msg); err != nil {
				return err
			}
		}
	}
}
