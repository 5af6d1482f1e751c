package controller

import (
	"context"

	"google.golang.org/grpc"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	appsv1 "podline.dev/proto/apps/v1"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	metav1 "podline.dev/proto/meta/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
	schedulingv1 "podline.dev/proto/scheduling/v1"
)

// Kind is one API resource as generic controllers (the garbage collector,
// the namespace controller) see it: its informer in the shared factory and
// an untyped client.
type Kind struct {
	Resource apis.Resource
	// Informer returns the resource's informer from c's factory: the same
	// one the typed Informer[T] gives.
	Informer func(c *Context) cache.SharedIndexInformer
	// Client returns an untyped client of the resource over conn.
	Client func(conn grpc.ClientConnInterface) ObjectClient
}

// ObjectClient reads and writes objects of one resource without knowing their type.
type ObjectClient interface {
	Get(ctx context.Context, namespace, name string) (object.Object, error)
	List(ctx context.Context, namespace string) ([]object.Object, error)
	Update(ctx context.Context, obj object.Object) (object.Object, error)
	Delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) error
}

// Kinds lists every resource of the resource table (proto/apis); a test
// checks none is missing.
var Kinds = []Kind{
	kindOf[*corev1.Pod](),
	kindOf[*corev1.Node](),
	kindOf[*corev1.Namespace](),
	kindOf[*corev1.Service](),
	kindOf[*corev1.Endpoints](),
	kindOf[*corev1.Event](),
	kindOf[*corev1.ConfigMap](),
	kindOf[*corev1.Secret](),
	kindOf[*corev1.ServiceAccount](),
	kindOf[*corev1.ResourceQuota](),
	kindOf[*appsv1.Deployment](),
	kindOf[*appsv1.ReplicaSet](),
	kindOf[*coordinationv1.Lease](),
	kindOf[*discoveryv1.EndpointSlice](),
	kindOf[*rbacv1.Role](),
	kindOf[*rbacv1.ClusterRole](),
	kindOf[*rbacv1.RoleBinding](),
	kindOf[*rbacv1.ClusterRoleBinding](),
	kindOf[*schedulingv1.PriorityClass](),
}

// KindFor finds the kind of an apiVersion ("apps/v1") and kind ("ReplicaSet"),
// as an ownerReference names it.
func KindFor(apiVersion, kind string) (Kind, bool) {
	for _, k := range Kinds {
		if k.Resource.Group.GroupVersion() == apiVersion && k.Resource.Kind == kind {
			return k, true
		}
	}
	return Kind{}, false
}

func kindOf[T object.Object]() Kind {
	return Kind{
		Resource: ResourceOf[T](),
		Informer: Informer[T],
		Client: func(conn grpc.ClientConnInterface) ObjectClient {
			return objectClient[T]{c: client.For[T](conn)}
		},
	}
}

// ResourceOf is T's entry in the resource table.
func ResourceOf[T object.Object]() apis.Resource {
	var zero T
	res, ok := apis.ByMessage(string(zero.ProtoReflect().Descriptor().FullName()))
	if !ok {
		panic("controller: not an API kind: " + string(zero.ProtoReflect().Descriptor().FullName()))
	}
	return res
}

// GroupResource names T's resource in API errors.
func GroupResource(res apis.Resource) apierrors.GroupResource {
	return apierrors.GroupResource{Group: res.Group.Name, Resource: res.Name}
}

// Informer is the shared informer of T's resource, over every namespace,
// keyed by its group-resource ("pods", "deployments.apps").
func Informer[T object.Object](c *Context) cache.SharedIndexInformer {
	res := ResourceOf[T]()
	var zero T
	exemplar := zero.ProtoReflect().Type().New().Interface().(T)
	return c.Informers.ForResource(res.GroupResource(), func() cache.ListerWatcher {
		return &client.ListWatch[T]{Client: client.For[T](c.Conn)}
	}, exemplar)
}

// Lister reads T from its shared informer.
func Lister[T object.Object](c *Context) cache.Lister[T] {
	return cache.NewLister[T](Informer[T](c).GetIndexer(), GroupResource(ResourceOf[T]()))
}

type objectClient[T object.Object] struct{ c *client.Client[T] }

func (o objectClient[T]) Get(ctx context.Context, namespace, name string) (object.Object, error) {
	obj, err := o.c.Get(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return obj, nil
}

func (o objectClient[T]) List(ctx context.Context, namespace string) ([]object.Object, error) {
	items, _, err := o.c.List(ctx, &metav1.ListRequest{Namespace: namespace})
	if err != nil {
		return nil, err
	}
	out := make([]object.Object, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out, nil
}

func (o objectClient[T]) Update(ctx context.Context, obj object.Object) (object.Object, error) {
	t, ok := obj.(T)
	if !ok {
		return nil, ErrWrongKind
	}
	out, err := o.c.Update(ctx, t)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (o objectClient[T]) Delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) error {
	_, err := o.c.Delete(ctx, namespace, name, opts)
	return err
}
