package deployment

import (
	"context"
	"fmt"
	"log/slog"
	"maps"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/workqueue"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/labels"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/controller-manager/internal/controller"
)

// Name is the controller's name in --controllers.
const Name = "deployment"

// Component is the event source and tracer name.
const Component = "deployment-controller"

// Controller is the deployment controller.
type Controller struct {
	deployments *client.Client[*appsv1.Deployment]
	rsClient    *client.Client[*appsv1.ReplicaSet]
	dLister     cache.Lister[*appsv1.Deployment]
	rsLister    cache.Lister[*appsv1.ReplicaSet]
	podLister   cache.Lister[*corev1.Pod]
	synced      []cache.InformerSynced
	queue       workqueue.RateLimitingInterface[string]
	recorder    controller.EventRecorder
	clock       clock.Clock
	log         *slog.Logger
}

// New builds the controller and registers its informers' handlers.
func New(c *controller.Context) (*Controller, error) {
	dc := &Controller{
		deployments: client.Deployments(c.Conn),
		rsClient:    client.ReplicaSets(c.Conn),
		dLister:     controller.Lister[*appsv1.Deployment](c),
		rsLister:    controller.Lister[*appsv1.ReplicaSet](c),
		podLister:   controller.Lister[*corev1.Pod](c),
		queue:       c.NewQueue(),
		recorder:    c.Recorder(Component),
		clock:       c.GetClock(),
		log:         c.Logger(Name),
	}
	dInf := controller.Informer[*appsv1.Deployment](c)
	rsInf := controller.Informer[*appsv1.ReplicaSet](c)
	podInf := controller.Informer[*corev1.Pod](c)
	regs := []struct {
		inf cache.SharedIndexInformer
		h   cache.ResourceEventHandler
	}{
		{dInf, cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o object.Object) { controller.Enqueue(dc.queue, o) },
			UpdateFunc: func(_, o object.Object) { controller.Enqueue(dc.queue, o) },
			DeleteFunc: func(o object.Object) { controller.Enqueue(dc.queue, o) },
		}},
		{rsInf, cache.ResourceEventHandlerFuncs{
			AddFunc:    dc.addReplicaSet,
			UpdateFunc: dc.updateReplicaSet,
			DeleteFunc: dc.deleteReplicaSet,
		}},
		{podInf, cache.ResourceEventHandlerFuncs{DeleteFunc: dc.deletePod}},
	}
	for _, r := range regs {
		reg, err := r.inf.AddEventHandler(r.h)
		if err != nil {
			return nil, err
		}
		dc.synced = append(dc.synced, reg.HasSynced)
	}
	return dc, nil
}

// Run works the queue until ctx is done.
func (dc *Controller) Run(ctx context.Context, workers int) error {
	return controller.RunWorkers(ctx, dc.log, dc.queue, workers, dc.Sync, dc.synced...)
}

// ------------------------------------------------------------ handlers

func (dc *Controller) resolve(namespace string, ref *metav1.OwnerReference) *appsv1.Deployment {
	return controller.ResolveControllerRef(dc.dLister, namespace, ref)
}

// deploymentsFor lists the deployments whose selector matches an orphan rs.
func (dc *Controller) deploymentsFor(rs *appsv1.ReplicaSet) []*appsv1.Deployment {
	return controller.SelectingOwners(dc.dLister, func(d *appsv1.Deployment) *metav1.LabelSelector { return d.GetSpec().GetSelector() }, rs)
}

func (dc *Controller) addReplicaSet(o object.Object) {
	rs := o.(*appsv1.ReplicaSet)
	if rs.GetMetadata().GetDeletionTimestamp() != nil {
		dc.deleteReplicaSet(rs)
		return
	}
	if ref := controller.GetControllerOf(rs); ref != nil {
		if d := dc.resolve(rs.GetMetadata().GetNamespace(), ref); d != nil {
			controller.Enqueue(dc.queue, d)
		}
		return
	}
	for _, d := range dc.deploymentsFor(rs) {
		controller.Enqueue(dc.queue, d)
	}
}

func (dc *Controller) updateReplicaSet(oldObj, newObj object.Object) {
	old, cur := oldObj.(*appsv1.ReplicaSet), newObj.(*appsv1.ReplicaSet)
	if old.GetMetadata().GetResourceVersion() == cur.GetMetadata().GetResourceVersion() {
		return
	}
	curRef, oldRef := controller.GetControllerOf(cur), controller.GetControllerOf(old)
	refChanged := !proto.Equal(curRef, oldRef)
	if refChanged && oldRef != nil {
		if d := dc.resolve(old.GetMetadata().GetNamespace(), oldRef); d != nil {
			controller.Enqueue(dc.queue, d)
		}
	}
	if curRef != nil {
		if d := dc.resolve(cur.GetMetadata().GetNamespace(), curRef); d != nil {
			controller.Enqueue(dc.queue, d)
		}
		return
	}
	if refChanged || !maps.Equal(cur.GetMetadata().GetLabels(), old.GetMetadata().GetLabels()) {
		for _, d := range dc.deploymentsFor(cur) {
			controller.Enqueue(dc.queue, d)
		}
	}
}

func (dc *Controller) deleteReplicaSet(o object.Object) {
	rs, ok := cache.As[*appsv1.ReplicaSet](o)
	if !ok {
		return
	}
	if d := dc.resolve(rs.GetMetadata().GetNamespace(), controller.GetControllerOf(rs)); d != nil {
		controller.Enqueue(dc.queue, d)
	}
}

// deletePod wakes a Recreate deployment waiting for its old pods to go.
func (dc *Controller) deletePod(o object.Object) {
	pod, ok := cache.As[*corev1.Pod](o)
	if !ok {
		return
	}
	ref := controller.GetControllerOf(pod)
	if ref == nil || ref.GetKind() != "ReplicaSet" {
		return
	}
	rs, err := dc.rsLister.Get(pod.GetMetadata().GetNamespace(), ref.GetName())
	if err != nil || rs.GetMetadata().GetUid() != ref.GetUid() {
		return
	}
	d := dc.resolve(rs.GetMetadata().GetNamespace(), controller.GetControllerOf(rs))
	if d != nil && !IsRollingUpdate(d) {
		controller.Enqueue(dc.queue, d)
	}
}

// ---------------------------------------------------------------- sync

// Sync reconciles the deployment with key namespace/name.
func (dc *Controller) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		dc.log.Error("bad key", "key", key, "err", err)
		return nil
	}
	d, err := dc.dLister.Get(ns, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ctx, span := telemetry.StartFromObject(ctx, d, Component, "deployment.sync")
	defer span.End()
	log := dc.log.With("deployment", key, "trace_id", span.SpanContext().TraceID().String())

	if err := validateStrategy(d); err != nil {
		dc.recorder.Eventf(d, controller.EventTypeWarning, "InvalidStrategy", "%v", err)
		log.Info("invalid strategy", "err", err)
		return nil
	}
	var rsList []*appsv1.ReplicaSet
	var pods map[string][]*corev1.Pod
	sel := d.GetSpec().GetSelector()
	if len(sel.GetMatchLabels()) > 0 || len(sel.GetMatchExpressions()) > 0 {
		selector, err := labels.FromLabelSelector(sel)
		if err != nil {
			dc.recorder.Eventf(d, controller.EventTypeWarning, "InvalidSelector", "%v", err)
			return nil
		}
		if rsList, err = dc.claimReplicaSets(ctx, d, selector); err != nil {
			return err
		}
		if !IsRollingUpdate(d) {
			pods = dc.podsByReplicaSet(d, selector, rsList)
		}
	}
	plan := Sync(Input{Deployment: d, ReplicaSets: rsList, PodsByReplicaSet: pods, Now: dc.clock.Now()})
	for _, e := range plan.Events {
		dc.recorder.Eventf(d, e.Type, e.Reason, "%s", e.Message)
	}
	if err := dc.execute(ctx, d, plan); err != nil {
		return err
	}
	if plan.RequeueAfter > 0 {
		dc.queue.AddAfter(key, plan.RequeueAfter)
	}
	return nil
}

func (dc *Controller) claimReplicaSets(ctx context.Context, d *appsv1.Deployment, selector labels.Selector) ([]*appsv1.ReplicaSet, error) {
	all, err := dc.rsLister.Namespace(d.GetMetadata().GetNamespace()).List(nil)
	if err != nil {
		return nil, err
	}
	m := controller.NewRefManager(d, controller.ResourceOf[*appsv1.Deployment](), selector, dc.rsClient,
		func(ctx context.Context) (object.Object, error) {
			return dc.deployments.Get(ctx, d.GetMetadata().GetNamespace(), d.GetMetadata().GetName())
		})
	return m.Claim(ctx, all)
}

func (dc *Controller) podsByReplicaSet(d *appsv1.Deployment, selector labels.Selector, rsList []*appsv1.ReplicaSet) map[string][]*corev1.Pod {
	pods, err := dc.podLister.Namespace(d.GetMetadata().GetNamespace()).List(selector)
	if err != nil {
		return nil
	}
	out := map[string][]*corev1.Pod{}
	for _, rs := range rsList {
		out[rs.GetMetadata().GetUid()] = nil
	}
	for _, pod := range pods {
		ref := controller.GetControllerOf(pod)
		if ref == nil {
			continue
		}
		if _, ok := out[ref.GetUid()]; ok {
			out[ref.GetUid()] = append(out[ref.GetUid()], pod)
		}
	}
	return out
}

// execute makes the plan's writes in order and stops at the first failure.
func (dc *Controller) execute(ctx context.Context, d *appsv1.Deployment, plan Plan) error {
	rvs := map[string]string{} // ReplicaSets written in this sync: their new resourceVersion
	for _, w := range plan.Writes {
		switch w.Kind {
		case CreateReplicaSet:
			rs := w.ReplicaSet
			telemetry.Stamp(ctx, rs)
			created, err := dc.rsClient.Create(ctx, rs)
			if apierrors.IsAlreadyExists(err) {
				return dc.collision(ctx, d, rs, err)
			}
			if err != nil {
				dc.recorder.Eventf(d, controller.EventTypeWarning, "ReplicaSetCreateError", "Failed to create new replica set %q: %v", rs.GetMetadata().GetName(), err)
				return err
			}
			rvs[created.GetMetadata().GetName()] = created.GetMetadata().GetResourceVersion()
		case UpdateReplicaSet:
			rs := w.ReplicaSet
			if rv, ok := rvs[rs.GetMetadata().GetName()]; ok {
				rs.Metadata.ResourceVersion = rv
			}
			telemetry.Stamp(ctx, rs)
			updated, err := dc.rsClient.Update(ctx, rs)
			if err != nil {
				return err
			}
			rvs[updated.GetMetadata().GetName()] = updated.GetMetadata().GetResourceVersion()
		case DeleteReplicaSet:
			md := w.ReplicaSet.GetMetadata()
			uid := md.GetUid()
			_, err := dc.rsClient.Delete(ctx, md.GetNamespace(), md.GetName(), &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{Uid: &uid}})
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		case UpdateDeploymentStatus:
			nd := w.Deployment
			telemetry.Stamp(ctx, nd)
			if _, err := dc.deployments.UpdateStatus(ctx, nd); err != nil {
				return err
			}
		}
		for _, e := range w.Events {
			dc.recorder.Eventf(d, e.Type, e.Reason, "%s", e.Message)
		}
	}
	return nil
}

// collision handles a new ReplicaSet whose name is taken: if it is ours with
// our template the cache was just behind; otherwise the template hashes
// collided and the deployment's collisionCount goes up.
func (dc *Controller) collision(ctx context.Context, d *appsv1.Deployment, rs *appsv1.ReplicaSet, createErr error) error {
	existing, err := dc.rsLister.Get(rs.GetMetadata().GetNamespace(), rs.GetMetadata().GetName())
	if err != nil {
		return createErr
	}
	if controller.IsControlledBy(existing, d) && EqualIgnoreHash(existing.GetSpec().GetTemplate(), d.GetSpec().GetTemplate()) {
		return fmt.Errorf("replica set %s is not in the cache yet: %w", rs.GetMetadata().GetName(), createErr)
	}
	nd := object.Copy(d)
	if nd.Status == nil {
		nd.Status = &appsv1.DeploymentStatus{}
	}
	nd.Status.CollisionCount = proto.Int32(nd.GetStatus().GetCollisionCount() + 1)
	telemetry.Stamp(ctx, nd)
	if _, err := dc.deployments.UpdateStatus(ctx, nd); err != nil {
		return err
	}
	dc.log.Info("hash collision, bumping collisionCount", "deployment", object.Key(d), "collisionCount", nd.Status.GetCollisionCount())
	return createErr
}
