package endpoints

import (
	"context"
	"log/slog"
	"maps"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/workqueue"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/controller-manager/internal/controller"
	"podline.dev/services/controller-manager/internal/controller/backends"
)

// Name is the controller's name in --controllers.
const Name = "endpoints"

// Component is the tracer name.
const Component = "endpoints-controller"

// annotationLeader holds a leader-election record on an Endpoints.
const annotationLeader = "control-plane.alpha.kubernetes.io/leader"

// Controller is the endpoints controller.
type Controller struct {
	endpoints *client.Client[*corev1.Endpoints]
	svcLister cache.Lister[*corev1.Service]
	podLister cache.Lister[*corev1.Pod]
	epsLister cache.Lister[*corev1.Endpoints]
	synced    []cache.InformerSynced
	queue     workqueue.RateLimitingInterface[string]
	log       *slog.Logger
}

// New builds the controller and registers its informers' handlers.
func New(c *controller.Context) (*Controller, error) {
	ec := &Controller{
		endpoints: client.Endpoints(c.Conn),
		svcLister: controller.Lister[*corev1.Service](c),
		podLister: controller.Lister[*corev1.Pod](c),
		epsLister: controller.Lister[*corev1.Endpoints](c),
		queue:     c.NewQueue(),
		log:       c.Logger(Name),
	}
	enqueue := func(o object.Object) { controller.Enqueue(ec.queue, o) }
	handlers := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{controller.Informer[*corev1.Service](c), cache.ResourceEventHandlerFuncs{
			AddFunc: enqueue, UpdateFunc: func(_, o object.Object) { enqueue(o) }, DeleteFunc: enqueue,
		}},
		{controller.Informer[*corev1.Pod](c), cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o object.Object) { ec.podChanged(nil, o) },
			UpdateFunc: ec.podChanged,
			DeleteFunc: func(o object.Object) { ec.podChanged(o, nil) },
		}},
		// An Endpoints deleted behind the controller's back is written
		// again if its Service still selects pods.
		{controller.Informer[*corev1.Endpoints](c), cache.ResourceEventHandlerFuncs{DeleteFunc: enqueue}},
	}
	for _, h := range handlers {
		reg, err := h.inf.AddEventHandler(h.h)
		if err != nil {
			return nil, err
		}
		ec.synced = append(ec.synced, reg.HasSynced)
	}
	return ec, nil
}

// Run queues the leftover Endpoints and works the queue until ctx is done.
func (ec *Controller) Run(ctx context.Context, workers int) error {
	go ec.enqueueLeftovers(ctx)
	return controller.RunWorkers(ctx, ec.log, ec.queue, workers, ec.Sync, ec.synced...)
}

// podChanged enqueues the Services whose selector matches the pod before or after.
func (ec *Controller) podChanged(oldObj, newObj object.Object) {
	for _, svc := range backends.ServicesOf(ec.svcLister, oldObj, newObj) {
		controller.Enqueue(ec.queue, svc)
	}
}

// Sync reconciles the Endpoints of the Service with key namespace/name.
func (ec *Controller) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := ec.svcLister.Get(ns, name)
	if apierrors.IsNotFound(err) {
		// The Service is gone; its Endpoints has no owner to take it along.
		_, err := ec.endpoints.Delete(ctx, ns, name, nil)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	if err != nil {
		return err
	}
	if !backends.Managed(svc) {
		return nil // written by hand
	}
	ctx, span := telemetry.StartFromObject(ctx, svc, Component, "endpoints.sync")
	defer span.End()

	pods, err := ec.podLister.Namespace(ns).List(backends.Selector(svc))
	if err != nil {
		return err
	}
	subsets, labels := desiredSubsets(svc, pods), desiredLabels(svc)
	truncated := truncate(subsets)
	cur, err := ec.epsLister.Get(ns, name)
	if apierrors.IsNotFound(err) {
		ep := &corev1.Endpoints{
			ApiVersion: "v1", Kind: "Endpoints",
			Metadata: &metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Subsets:  subsets,
		}
		if truncated {
			ep.Metadata.Annotations = map[string]string{AnnotationOverCapacity: "truncated"}
		}
		telemetry.Stamp(ctx, ep)
		_, err := ec.endpoints.Create(ctx, ep)
		return err
	}
	if err != nil {
		return err
	}
	_, marked := cur.GetMetadata().GetAnnotations()[AnnotationOverCapacity]
	if sameSubsets(cur.GetSubsets(), subsets) && maps.Equal(cur.GetMetadata().GetLabels(), labels) && marked == truncated {
		return nil
	}
	next := object.Copy(cur)
	next.Subsets, next.Metadata.Labels = subsets, labels
	if truncated {
		if next.Metadata.Annotations == nil {
			next.Metadata.Annotations = map[string]string{}
		}
		next.Metadata.Annotations[AnnotationOverCapacity] = "truncated"
	} else {
		delete(next.Metadata.Annotations, AnnotationOverCapacity)
	}
	telemetry.Stamp(ctx, next)
	_, err = ec.endpoints.Update(ctx, next)
	return err
}

// enqueueLeftovers queues every Endpoints once the caches have synced, as
// Kubernetes' controller does at start: one whose Service was deleted while
// no controller ran is deleted then. Leader-election records kept in
// Endpoints by older components have no Service and are left alone.
func (ec *Controller) enqueueLeftovers(ctx context.Context) {
	if cache.WaitForCacheSync(ctx, ec.synced...) {
		ec.queueLeftovers()
	}
}

func (ec *Controller) queueLeftovers() {
	eps, err := ec.epsLister.List(nil)
	if err != nil {
		return
	}
	for _, ep := range eps {
		if _, ok := ep.GetMetadata().GetAnnotations()[annotationLeader]; ok {
			continue
		}
		controller.Enqueue(ec.queue, ep)
	}
}

func sameSubsets(a, b []*corev1.EndpointSubset) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !proto.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
