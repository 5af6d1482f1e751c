package grpcapi

import (
	"context"
	"strings"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/grpcdyn"
	"podline.dev/pkg/k8sjson"
	autoscalingv1 "podline.dev/proto/autoscaling/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/registry"
)

// writeCall picks the registry call behind the methods added to every
// service beyond get/list/create/update/delete: PATCH of the object and of
// its status and scale subresources, GET of status, GET and PUT of scale,
// and deletecollection.
func (h *handler) writeCall(method string) (grpcdyn.UnaryFunc, bool) {
	reg := h.reg
	switch method {
	case "Patch", "PatchStatus", "PatchScale":
		return func(ctx context.Context, req proto.Message) (proto.Message, error) {
			r := req.(*metav1.PatchRequest)
			ctx = withManager(ctx, r.GetFieldManager())
			opts := registry.PatchOptions{
				Type: r.GetPatchType(), Data: r.GetData(), DryRun: isDryRun(r.GetDryRun()),
				Force: r.GetForce(), Validation: validation(r.GetFieldValidation()), FieldManager: r.GetFieldManager(),
			}
			switch method {
			case "PatchScale":
				return reg.PatchScale(ctx, r.GetNamespace(), r.GetName(), opts)
			case "PatchStatus":
				opts.Subresource = "status"
			}
			return wrap(reg.Patch(ctx, r.GetNamespace(), r.GetName(), opts))
		}, true
	case "GetStatus":
		// GET of the status subresource is the whole object, as in Kubernetes
		// (kubectl patch --subresource=status reads it first).
		return func(ctx context.Context, req proto.Message) (proto.Message, error) {
			r := req.(*metav1.GetRequest)
			return wrap(reg.Get(ctx, r.GetNamespace(), r.GetName()))
		}, true
	case "GetScale":
		return func(ctx context.Context, req proto.Message) (proto.Message, error) {
			r := req.(*metav1.GetRequest)
			return reg.GetScale(ctx, r.GetNamespace(), r.GetName())
		}, true
	case "UpdateScale":
		return func(ctx context.Context, req proto.Message) (proto.Message, error) {
			r := req.(*autoscalingv1.ScaleWriteRequest)
			if r.GetObject() == nil {
				return nil, apierrors.NewBadRequest("the request has no object")
			}
			ctx = withManager(ctx, r.GetFieldManager())
			return reg.UpdateScale(ctx, r.GetNamespace(), r.GetName(), r.GetObject(), isDryRun(r.GetDryRun()))
		}, true
	case "DeleteCollection":
		return func(ctx context.Context, req proto.Message) (proto.Message, error) {
			items, err := reg.DeleteCollection(ctx, req.(*metav1.DeleteCollectionRequest))
			if err != nil {
				return nil, err
			}
			return h.msgs.List(items, &metav1.ListMeta{}), nil
		}, true
	}
	return nil, false
}

// withManager names the write's field manager: the fieldManager
// parameter, else the client's user agent up to its first "/", as in
// Kubernetes. REST requests reach here through the gateway, which passes
// the User-Agent header as grpcgateway-user-agent.
func withManager(ctx context.Context, manager string) context.Context {
	if manager == "" {
		md, _ := metadata.FromIncomingContext(ctx)
		ua := first(md.Get("grpcgateway-user-agent"))
		if ua == "" {
			// grpc-go appends its own "grpc-go/<version>" after the caller's.
			if f := strings.Fields(first(md.Get("user-agent"))); len(f) > 0 {
				ua = f[0]
			}
		}
		manager = registry.DefaultFieldManager(ua)
	}
	return registry.WithFieldManager(ctx, manager)
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// validation maps the fieldValidation parameter; Kubernetes' default is Warn.
func validation(v string) k8sjson.FieldValidation {
	switch strings.ToLower(v) {
	case "strict":
		return k8sjson.Strict
	case "ignore":
		return k8sjson.Ignore
	}
	return k8sjson.Warn
}
