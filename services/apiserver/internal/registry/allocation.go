package registry

import (
	"context"

	"podline.dev/pkg/object"
)

// Allocation hands out what a kind's objects hold outside themselves (a
// Service's ClusterIP and NodePorts), around the etcd write, as
// kube-apiserver's BeginCreate, BeginUpdate and AfterDelete hooks do.
type Allocation interface {
	// BeginCreate allocates for obj, which it fills in, once admission and
	// validation have passed. finish is called once with whether the
	// object was stored; on false it releases what it took.
	BeginCreate(ctx context.Context, obj object.Object, dryRun bool) (finish func(ctx context.Context, stored bool), err error)
	// BeginUpdate is BeginCreate for the update of old to obj: on true
	// finish releases what old held and obj no longer does, on false what
	// it took for obj.
	BeginUpdate(ctx context.Context, obj, old object.Object, dryRun bool) (finish func(ctx context.Context, stored bool), err error)
	// Release frees what obj held, once it has been removed from etcd.
	Release(ctx context.Context, obj object.Object)
}

// WithAllocation runs a's hooks around the writes of the registry's kind.
func WithAllocation(a Allocation) Option { return func(r *Registry) { r.alloc = a } }

func finishNothing(context.Context, bool) {}
