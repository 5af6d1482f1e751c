package registry

import (
	"context"

	"podline.dev/pkg/object"
	"podline.dev/services/apiserver/internal/admission"
	"podline.dev/services/apiserver/internal/admission/plugins/defaulting"
)

// WithAdmission runs writes through chain: its mutating plugins, then the
// registry's validation, then its validating plugins. Without it only
// validation runs.
func WithAdmission(chain *admission.Chain) Option {
	return func(r *Registry) { r.admission = chain }
}

// admit runs admission and validation on a create (old nil) or update of
// obj. On update it settles metadata.generation once mutation is done, so
// that defaults filled in by the chain do not count as a spec change.
func (r *Registry) admit(ctx context.Context, op admission.Operation, subresource string, obj, old object.Object, dryRun bool) error {
	if old != nil {
		// Kubernetes defaults what it reads from etcd, so an object stored
		// before a default existed is compared, validated and written back
		// with today's defaults. The defaulting plugin covers the new object
		// of a main-resource write; a subresource write carries the stored
		// spec, which is defaulted here.
		old = object.Copy(old)
		defaulting.Apply(old)
		if subresource != "" {
			defaulting.Apply(obj)
		}
	}
	schema := func(ctx context.Context) error {
		if old != nil {
			r.settleGeneration(obj, old, subresource)
		}
		return r.validate(ctx, obj, old)
	}
	if r.admission == nil {
		return schema(ctx)
	}
	md := obj.GetMetadata()
	a := &admission.Attributes{Operation: op, Resource: r.Resource, Subresource: subresource,
		Namespace: md.GetNamespace(), Name: md.GetName(), Object: obj, OldObject: old, DryRun: dryRun}
	return r.admission.Admit(ctx, a, schema)
}

// admitDelete runs the chain on the deletion of cur: there is no object
// to mutate or validate, but plugins may refuse (a system namespace, a
// node deleting another node's pod).
func (r *Registry) admitDelete(ctx context.Context, cur object.Object, dryRun bool) error {
	if r.admission == nil {
		return nil
	}
	md := cur.GetMetadata()
	a := &admission.Attributes{Operation: admission.Delete, Resource: r.Resource,
		Namespace: md.GetNamespace(), Name: md.GetName(), OldObject: cur, DryRun: dryRun}
	return r.admission.Admit(ctx, a, nil)
}

// settleGeneration bumps metadata.generation when an update of the
// resource itself changed its spec, as Kubernetes does.
func (r *Registry) settleGeneration(next, cur object.Object, subresource string) {
	nmd, cmd := next.GetMetadata(), cur.GetMetadata()
	nmd.Generation = cmd.Generation
	if subresource != "status" && hasField(next, "spec") && !sameField(next, cur, "spec") {
		nmd.Generation = cmd.Generation + 1
	}
}

// subresourceOf names the subresource of an update for admission.
func subresourceOf(opts writeOpts) string {
	if opts.status && opts.subresource == "" {
		return "status"
	}
	return opts.subresource
}
