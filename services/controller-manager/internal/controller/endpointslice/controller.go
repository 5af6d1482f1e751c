package endpointslice

import (
	"context"
	"log/slog"
	"maps"
	"sort"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/workqueue"
	"podline.dev/pkg/labels"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/controller-manager/internal/controller"
	"podline.dev/services/controller-manager/internal/controller/backends"
)

// Name is the controller's name in --controllers.
const Name = "endpointslice"

// Component is the tracer name.
const Component = "endpointslice-controller"

// LabelHeadless marks the slices of a headless Service.
const LabelHeadless = "service.kubernetes.io/headless"

// Controller is the EndpointSlice controller.
type Controller struct {
	slices      *client.Client[*discoveryv1.EndpointSlice]
	svcLister   cache.Lister[*corev1.Service]
	podLister   cache.Lister[*corev1.Pod]
	sliceLister cache.Lister[*discoveryv1.EndpointSlice]
	maxPerSlice int
	synced      []cache.InformerSynced
	queue       workqueue.RateLimitingInterface[string]
	log         *slog.Logger
}

// New builds the controller and registers its informers' handlers.
func New(c *controller.Context) (*Controller, error) {
	ec := &Controller{
		slices:      client.EndpointSlices(c.Conn),
		svcLister:   controller.Lister[*corev1.Service](c),
		podLister:   controller.Lister[*corev1.Pod](c),
		sliceLister: controller.Lister[*discoveryv1.EndpointSlice](c),
		maxPerSlice: c.Options.EndpointSliceMaxEndpoints,
		queue:       c.NewQueue(),
		log:         c.Logger(Name),
	}
	if ec.maxPerSlice <= 0 {
		ec.maxPerSlice = 100
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
		{controller.Informer[*discoveryv1.EndpointSlice](c), cache.ResourceEventHandlerFuncs{
			AddFunc:    ec.sliceChanged,
			UpdateFunc: func(_, o object.Object) { ec.sliceChanged(o) },
			DeleteFunc: ec.sliceChanged,
		}},
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

// Run works the queue until ctx is done.
func (ec *Controller) Run(ctx context.Context, workers int) error {
	return controller.RunWorkers(ctx, ec.log, ec.queue, workers, ec.Sync, ec.synced...)
}

// podChanged enqueues the Services whose selector matches the pod before or after.
func (ec *Controller) podChanged(oldObj, newObj object.Object) {
	for _, svc := range backends.ServicesOf(ec.svcLister, oldObj, newObj) {
		controller.Enqueue(ec.queue, svc)
	}
}

func (ec *Controller) sliceChanged(o object.Object) {
	s, ok := cache.As[*discoveryv1.EndpointSlice](o)
	if !ok {
		return
	}
	l := s.GetMetadata().GetLabels()
	if l[LabelManagedBy] != ManagedByValue || l[LabelServiceName] == "" {
		return
	}
	ec.queue.Add(object.KeyOf(s.GetMetadata().GetNamespace(), l[LabelServiceName]))
}

// Sync reconciles the slices of the Service with key namespace/name.
func (ec *Controller) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := ec.svcLister.Get(ns, name)
	if apierrors.IsNotFound(err) {
		return nil // its slices are the garbage collector's: it owns them
	}
	if err != nil {
		return err
	}
	if !backends.Managed(svc) {
		return nil
	}
	ctx, span := telemetry.StartFromObject(ctx, svc, Component, "endpointslice.sync")
	defer span.End()

	pods, err := ec.podLister.Namespace(ns).List(backends.Selector(svc))
	if err != nil {
		return err
	}
	existing, err := ec.sliceLister.Namespace(ns).List(labels.SelectorFromSet(labels.Set{LabelServiceName: name, LabelManagedBy: ManagedByValue}))
	if err != nil {
		return err
	}
	return ec.reconcile(ctx, svc, desiredGroups(svc, pods), existing)
}

func (ec *Controller) reconcile(ctx context.Context, svc *corev1.Service, groups []group, existing []*discoveryv1.EndpointSlice) error {
	byGroup := map[string][]*discoveryv1.EndpointSlice{}
	var toDelete []*discoveryv1.EndpointSlice
	for _, s := range existing {
		if !controller.IsControlledBy(s, svc) {
			toDelete = append(toDelete, s)
			continue
		}
		k := groupKey(s.GetAddressType(), sortedPorts(s.GetPorts()))
		byGroup[k] = append(byGroup[k], s)
	}
	wantLabels := sliceLabels(svc)
	for _, g := range groups {
		olds := byGroup[g.key()]
		delete(byGroup, g.key())
		sort.Slice(olds, func(i, j int) bool { return olds[i].GetMetadata().GetName() < olds[j].GetMetadata().GetName() })
		for i, eps := range chunk(g.endpoints, ec.maxPerSlice) {
			if i >= len(olds) {
				if err := ec.create(ctx, svc, g, eps, wantLabels); err != nil {
					return err
				}
				continue
			}
			if err := ec.update(ctx, olds[i], g, eps, wantLabels); err != nil {
				return err
			}
		}
		if n := len(chunk(g.endpoints, ec.maxPerSlice)); n < len(olds) {
			toDelete = append(toDelete, olds[n:]...)
		}
	}
	for _, rest := range byGroup {
		toDelete = append(toDelete, rest...)
	}
	for _, s := range toDelete {
		_, err := ec.slices.Delete(ctx, s.GetMetadata().GetNamespace(), s.GetMetadata().GetName(), nil)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func sortedPorts(ports []*discoveryv1.EndpointPort) []*discoveryv1.EndpointPort {
	out := append([]*discoveryv1.EndpointPort(nil), ports...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

func sliceLabels(svc *corev1.Service) map[string]string {
	l := maps.Clone(svc.GetMetadata().GetLabels())
	if l == nil {
		l = map[string]string{}
	}
	l[LabelServiceName] = svc.GetMetadata().GetName()
	l[LabelManagedBy] = ManagedByValue
	if svc.GetSpec().GetClusterIp() == "None" {
		l[LabelHeadless] = ""
	} else {
		delete(l, LabelHeadless)
	}
	return l
}

func (ec *Controller) create(ctx context.Context, svc *corev1.Service, g group, eps []*discoveryv1.Endpoint, lbls map[string]string) error {
	s := &discoveryv1.EndpointSlice{
		ApiVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice",
		Metadata: &metav1.ObjectMeta{
			GenerateName:    svc.GetMetadata().GetName() + "-",
			Namespace:       svc.GetMetadata().GetNamespace(),
			Labels:          lbls,
			OwnerReferences: []*metav1.OwnerReference{controller.NewControllerRef(svc, controller.ResourceOf[*corev1.Service]())},
		},
		AddressType: g.addressType,
		Endpoints:   eps,
		Ports:       g.ports,
	}
	telemetry.Stamp(ctx, s)
	_, err := ec.slices.Create(ctx, s)
	return err
}

func (ec *Controller) update(ctx context.Context, old *discoveryv1.EndpointSlice, g group, eps []*discoveryv1.Endpoint, lbls map[string]string) error {
	next := object.Copy(old)
	next.Endpoints, next.Ports = eps, g.ports
	next.Metadata.Labels = lbls
	if sameContent(old, next) {
		return nil
	}
	telemetry.Stamp(ctx, next)
	_, err := ec.slices.Update(ctx, next)
	return err
}

func sameContent(a, b *discoveryv1.EndpointSlice) bool {
	if a.GetAddressType() != b.GetAddressType() || !maps.Equal(a.GetMetadata().GetLabels(), b.GetMetadata().GetLabels()) {
		return false
	}
	if len(a.GetEndpoints()) != len(b.GetEndpoints()) || len(a.GetPorts()) != len(b.GetPorts()) {
		return false
	}
	for i := range a.GetEndpoints() {
		if !proto.Equal(a.Endpoints[i], b.Endpoints[i]) {
			return false
		}
	}
	ap, bp := sortedPorts(a.GetPorts()), sortedPorts(b.GetPorts())
	for i := range ap {
		if !proto.Equal(ap[i], bp[i]) {
			return false
		}
	}
	return true
}
