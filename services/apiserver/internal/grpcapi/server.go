package grpcapi

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/grpcdyn"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/admission"
	"podline.dev/services/apiserver/internal/registry"
)

// Register adds the gRPC service of each registry to s.
func Register(s grpc.ServiceRegistrar, regs []*registry.Registry) error {
	for _, reg := range regs {
		sd, err := serviceDesc(reg)
		if err != nil {
			return err
		}
		s.RegisterService(sd, reg)
	}
	return nil
}

// handler is one resource's implementation of its service.
type handler struct {
	reg      *registry.Registry
	msgs     grpcdyn.Messages
	memo     grpcdyn.EventMemo // needs the server's grpcdyn.ServerCodec
	writeReq map[string]protoreflect.MessageType
}

func serviceDesc(reg *registry.Registry) (*grpc.ServiceDesc, error) {
	res := reg.Resource
	h := &handler{reg: reg, writeReq: map[string]protoreflect.MessageType{}}
	var err error
	if h.msgs, err = grpcdyn.MessagesOf(res); err != nil {
		return nil, err
	}
	unary := h.unaryCall
	if res.Warning != "" {
		unary = func(method string) (grpcdyn.UnaryFunc, error) {
			call, err := h.unaryCall(method)
			if err != nil {
				return nil, err
			}
			return withWarning(call, res.Warning), nil
		}
	}
	return grpcdyn.ServiceDesc(res, unary, h.watchHandler)
}

// withWarning answers every call with warning, as Kubernetes warns on
// every request for a deprecated kind (the REST layer makes it a Warning
// header).
func withWarning(call grpcdyn.UnaryFunc, warning string) grpcdyn.UnaryFunc {
	return func(ctx context.Context, req proto.Message) (proto.Message, error) {
		_ = grpc.SetHeader(ctx, metadata.Pairs(admission.WarningMetadataKey, warning))
		return call(ctx, req)
	}
}

// unaryCall picks the registry call behind a method name.
func (h *handler) unaryCall(method string) (grpcdyn.UnaryFunc, error) {
	reg := h.reg
	switch method {
	case "Get":
		return func(ctx context.Context, req proto.Message) (proto.Message, error) {
			r := req.(*metav1.GetRequest)
			return wrap(reg.Get(ctx, r.GetNamespace(), r.GetName()))
		}, nil
	case "List":
		return func(ctx context.Context, req proto.Message) (proto.Message, error) {
			items, lm, err := reg.List(ctx, req.(*metav1.ListRequest))
			if err != nil {
				return nil, err
			}
			return h.msgs.List(items, lm), nil
		}, nil
	case "Create", "Update", "UpdateStatus":
		return func(ctx context.Context, req proto.Message) (proto.Message, error) {
			w := readWrite(req)
			if w.object == nil {
				return nil, apierrors.NewBadRequest("the request has no object")
			}
			ctx = withManager(ctx, w.fieldManager)
			switch method {
			case "Create":
				return wrap(reg.Create(ctx, w.namespace, w.object, w.dryRun))
			case "Update":
				return wrap(reg.Update(ctx, w.namespace, w.name, w.object, w.dryRun))
			default:
				return wrap(reg.UpdateStatus(ctx, w.namespace, w.name, w.object, w.dryRun))
			}
		}, nil
	case "Delete":
		return func(ctx context.Context, req proto.Message) (proto.Message, error) {
			r := req.(*metav1.DeleteRequest)
			// dryRun may come as a query parameter or in the DeleteOptions
			// body (kubectl delete --dry-run=server sends the body).
			opts := deleteOptions(r)
			return wrap(reg.Delete(ctx, r.GetNamespace(), r.GetName(), opts, isDryRun(opts.GetDryRun())))
		}, nil
	}
	if call, ok := h.writeCall(method); ok {
		return call, nil
	}
	if action, ok := reg.Action(method); ok {
		return func(ctx context.Context, req proto.Message) (proto.Message, error) {
			w := readWrite(req)
			if w.object == nil {
				return nil, apierrors.NewBadRequest("the request has no object")
			}
			return action(ctx, w.namespace, w.name, w.object, w.dryRun)
		}, nil
	}
	return nil, fmt.Errorf("no implementation for %s", method)
}

func wrap(obj object.Object, err error) (proto.Message, error) {
	if err != nil {
		return nil, err
	}
	return obj, nil
}

// deleteOptions merges the options body with the query-parameter forms.
func deleteOptions(r *metav1.DeleteRequest) *metav1.DeleteOptions {
	opts := proto.Clone(r.GetOptions()).(*metav1.DeleteOptions)
	if opts == nil {
		opts = &metav1.DeleteOptions{}
	}
	if r.GracePeriodSeconds != nil && opts.GracePeriodSeconds == nil {
		opts.GracePeriodSeconds = r.GracePeriodSeconds
	}
	if r.GetPropagationPolicy() != "" && opts.PropagationPolicy == nil {
		opts.PropagationPolicy = proto.String(r.GetPropagationPolicy())
	}
	opts.DryRun = append(opts.DryRun, r.GetDryRun()...)
	return opts
}

func isDryRun(v []string) bool {
	for _, s := range v {
		if s == "All" {
			return true
		}
	}
	return false
}

// writeRequest is the common shape of every <Kind>WriteRequest.
type writeRequest struct {
	namespace, name string
	object          object.Object
	dryRun          bool
	fieldManager    string
}

func readWrite(req proto.Message) writeRequest {
	m := req.ProtoReflect()
	fields := m.Descriptor().Fields()
	w := writeRequest{
		namespace: m.Get(fields.ByName("namespace")).String(),
		name:      m.Get(fields.ByName("name")).String(),
	}
	if fd := fields.ByName("field_manager"); fd != nil {
		w.fieldManager = m.Get(fd).String()
	}
	if fd := fields.ByName("object"); m.Has(fd) {
		w.object = m.Get(fd).Message().Interface().(object.Object)
	}
	list := m.Get(fields.ByName("dry_run")).List()
	for i := 0; i < list.Len(); i++ {
		if list.Get(i).String() == "All" {
			w.dryRun = true
		}
	}
	return w
}

// watchHandler serves Watch: it opens the watch (a 410 fails the call
// before any header), sends the headers at once so REST clients see the
// stream start, then forwards events until the watch or the client ends.
func (h *handler) watchHandler(in protoreflect.MessageType) grpc.StreamHandler {
	return func(srv any, stream grpc.ServerStream) error {
		req := in.New().Interface().(*metav1.ListRequest)
		if err := stream.RecvMsg(req); err != nil {
			return err
		}
		ctx := stream.Context()
		w, err := h.reg.Watch(ctx, req)
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
			case ev, ok := <-w.ResultChan():
				if !ok {
					return nil
				}
				if ev.Type == watch.Error {
					if ev.Err != nil {
						return ev.Err
					}
					return apierrors.NewInternalError(fmt.Errorf("watch ended"))
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
}
