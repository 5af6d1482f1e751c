package garbagecollector

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/workqueue"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/controller-manager/internal/controller"
)

// Name is the controller's name in --controllers.
const Name = "garbagecollector"

// Component is the tracer name.
const Component = "garbage-collector-controller"

// Propagation policies.
const (
	PropagationBackground = "Background"
	PropagationForeground = "Foreground"
	PropagationOrphan     = "Orphan"
)

// Controller is the garbage collector.
type Controller struct {
	graph   *graph
	changes *workqueue.Queue[*event]
	clients map[string]controller.ObjectClient // by apiVersion + "/" + kind
	kinds   map[string]controller.Kind
	synced  []cache.InformerSynced
	log     *slog.Logger

	attemptToDelete *workqueue.RateLimitingQueue[*node]
	attemptToOrphan *workqueue.RateLimitingQueue[*node]
}

func kindKey(apiVersion, kind string) string { return apiVersion + "/" + kind }

// New builds the collector over every kind of the resource table.
func New(c *controller.Context) (*Controller, error) {
	clk := workqueue.WithClock(c.GetClock())
	gc := &Controller{
		changes:         workqueue.New[*event](),
		clients:         map[string]controller.ObjectClient{},
		kinds:           map[string]controller.Kind{},
		log:             c.Logger(Name),
		attemptToDelete: workqueue.NewRateLimitingQueue[*node](workqueue.DefaultControllerRateLimiter[*node](clk), clk),
		attemptToOrphan: workqueue.NewRateLimitingQueue[*node](workqueue.DefaultControllerRateLimiter[*node](clk), clk),
	}
	gc.graph = newGraph(gc.attemptToDelete, gc.attemptToOrphan)
	for _, k := range controller.Kinds {
		res := k.Resource
		key := kindKey(res.Group.GroupVersion(), res.Kind)
		gc.clients[key] = k.Client(c.Conn)
		gc.kinds[key] = k
		reg, err := k.Informer(c).AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(o object.Object) { gc.changes.Add(&event{typ: addEvent, obj: o, res: res}) },
			UpdateFunc: func(old, o object.Object) {
				gc.changes.Add(&event{typ: updateEvent, obj: o, old: old, res: res})
			},
			DeleteFunc: func(o object.Object) {
				if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
					o = t.Object
				}
				gc.changes.Add(&event{typ: deleteEvent, obj: o, res: res})
			},
		})
		if err != nil {
			return nil, err
		}
		gc.synced = append(gc.synced, reg.HasSynced)
	}
	return gc, nil
}

// Run builds the graph and, once every informer has synced, collects with
// workers goroutines per queue, until ctx is done.
func (gc *Controller) Run(ctx context.Context, workers int) error {
	defer gc.changes.ShutDown()
	defer gc.attemptToDelete.ShutDown()
	defer gc.attemptToOrphan.ShutDown()
	var wg sync.WaitGroup
	wg.Go(func() {
		for gc.processGraphChange() {
		}
	})
	if !cache.WaitForCacheSync(ctx, gc.synced...) {
		gc.changes.ShutDown()
		wg.Wait()
		return controller.ErrCacheNotSynced
	}
	if workers < 1 {
		workers = 1
	}
	gc.log.Info("starting workers", "workers", workers)
	for range workers {
		wg.Go(func() {
			for gc.processNext(ctx, gc.attemptToDelete, gc.attemptToDeleteItem) {
			}
		})
		wg.Go(func() {
			for gc.processNext(ctx, gc.attemptToOrphan, gc.attemptToOrphanItem) {
			}
		})
	}
	<-ctx.Done()
	gc.changes.ShutDown()
	gc.attemptToDelete.ShutDown()
	gc.attemptToOrphan.ShutDown()
	wg.Wait()
	return nil
}

func (gc *Controller) processGraphChange() bool {
	ev, shutdown := gc.changes.Get()
	if shutdown {
		return false
	}
	defer gc.changes.Done(ev)
	gc.graph.process(ev)
	return true
}

func (gc *Controller) processNext(ctx context.Context, q *workqueue.RateLimitingQueue[*node], fn func(context.Context, *node) error) bool {
	n, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(n)
	if err := fn(ctx, n); err != nil {
		if ctx.Err() == nil {
			gc.log.Info("garbage collection failed, requeuing", "object", n.identity.String(), "err", err)
			q.AddRateLimited(n)
		}
		return true
	}
	q.Forget(n)
	return true
}

// ---------------------------------------------------------------- I/O

func (gc *Controller) clientFor(id identity) (controller.ObjectClient, apis.Resource, bool) {
	key := kindKey(id.APIVersion, id.Kind)
	c, ok := gc.clients[key]
	return c, gc.kinds[key].Resource, ok
}

// get reads an object fresh; ok is false for kinds podline does not serve.
func (gc *Controller) get(ctx context.Context, id identity) (object.Object, bool, error) {
	c, _, ok := gc.clientFor(id)
	if !ok {
		return nil, false, nil
	}
	obj, err := c.Get(ctx, id.Namespace, id.Name)
	return obj, true, err
}

func (gc *Controller) deleteObject(ctx context.Context, id identity, policy string) error {
	c, _, ok := gc.clientFor(id)
	if !ok {
		return nil
	}
	uid := id.UID
	err := c.Delete(ctx, id.Namespace, id.Name, &metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{Uid: &uid},
		PropagationPolicy: proto.String(policy),
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or replaced by another object of the same name
	}
	return err
}

// mutate reads the object fresh and updates it with fn's change, retrying
// on conflicts. fn reports whether it changed anything.
func (gc *Controller) mutate(ctx context.Context, id identity, fn func(obj object.Object) bool) error {
	c, _, ok := gc.clientFor(id)
	if !ok {
		return nil
	}
	for range 5 {
		obj, err := c.Get(ctx, id.Namespace, id.Name)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if obj.GetMetadata().GetUid() != id.UID {
			return nil
		}
		if !fn(obj) {
			return nil
		}
		telemetry.Stamp(ctx, obj)
		_, err = c.Update(ctx, obj)
		if apierrors.IsConflict(err) {
			continue
		}
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	return fmt.Errorf("update of %s kept conflicting", id)
}

func (gc *Controller) removeOwnerRefs(ctx context.Context, id identity, uids map[string]bool) error {
	return gc.mutate(ctx, id, func(obj object.Object) bool {
		md := obj.GetMetadata()
		kept := controller.RemoveOwnerRefs(md.OwnerReferences, uids)
		if len(kept) == len(md.OwnerReferences) {
			return false
		}
		md.OwnerReferences = kept
		return true
	})
}

func (gc *Controller) removeFinalizer(ctx context.Context, id identity, finalizer string) error {
	return gc.mutate(ctx, id, func(obj object.Object) bool {
		md := obj.GetMetadata()
		i := slices.Index(md.Finalizers, finalizer)
		if i < 0 {
			return false
		}
		md.Finalizers = slices.Delete(md.Finalizers, i, i+1)
		return true
	})
}

// unblockOwnerRefs clears blockOwnerDeletion on the references to owners,
// so a cycle of foreground deletions cannot wait on itself.
func (gc *Controller) unblockOwnerRefs(ctx context.Context, id identity, owners map[string]bool) error {
	return gc.mutate(ctx, id, func(obj object.Object) bool {
		changed := false
		for _, ref := range obj.GetMetadata().GetOwnerReferences() {
			if owners[ref.GetUid()] && ref.GetBlockOwnerDeletion() {
				ref.BlockOwnerDeletion = proto.Bool(false)
				changed = true
			}
		}
		return changed
	})
}

// virtualDelete tells the graph an object is gone.
func (gc *Controller) virtualDelete(id identity) {
	gc.changes.Add(&event{typ: deleteEvent, virtual: true, id: id})
}

// ------------------------------------------------------ attemptToDelete

func (gc *Controller) attemptToDeleteItem(ctx context.Context, item *node) error {
	s := gc.graph.snapshot(item)
	if s.beingDeleted && !s.deletingDependents {
		return nil // someone else's finalizers hold it
	}
	latest, known, err := gc.get(ctx, s.identity)
	if !known {
		return nil
	}
	if apierrors.IsNotFound(err) {
		gc.virtualDelete(s.identity)
		return nil
	}
	if err != nil {
		return err
	}
	if latest.GetMetadata().GetUid() != s.identity.UID {
		gc.virtualDelete(s.identity)
		return nil
	}
	if s.virtual {
		return nil // it exists; the informer will show it
	}
	ctx, span := telemetry.StartFromObject(ctx, latest, Component, "garbagecollector.attemptToDelete")
	defer span.End()
	if s.deletingDependents {
		return gc.processDeletingDependents(ctx, item, s)
	}
	refs := latest.GetMetadata().GetOwnerReferences()
	if len(refs) == 0 {
		return nil
	}
	solid, dangling, waiting, err := gc.classifyReferences(ctx, s.identity, refs)
	if err != nil {
		return err
	}
	switch {
	case len(solid) != 0:
		if len(dangling) == 0 && len(waiting) == 0 {
			return nil
		}
		uids := map[string]bool{}
		for _, r := range append(dangling, waiting...) {
			uids[r.GetUid()] = true
		}
		gc.log.Info("removing dangling owner references", "object", s.identity.String(), "owners", len(uids))
		return gc.removeOwnerRefs(ctx, s.identity, uids)
	case len(waiting) != 0 && len(s.dependents) != 0:
		for _, dep := range s.dependents {
			if gc.graph.isDeletingDependents(dep) {
				owners := map[string]bool{}
				for _, r := range waiting {
					owners[r.GetUid()] = true
				}
				if err := gc.unblockOwnerRefs(ctx, s.identity, owners); err != nil {
					return err
				}
				break
			}
		}
		gc.log.Info("deleting object in the foreground", "object", s.identity.String())
		return gc.deleteObject(ctx, s.identity, PropagationForeground)
	default:
		policy := PropagationBackground
		switch {
		case hasFinalizer(latest, FinalizerOrphan):
			policy = PropagationOrphan
		case hasFinalizer(latest, FinalizerForeground):
			policy = PropagationForeground
		}
		gc.log.Info("deleting object", "object", s.identity.String(), "propagationPolicy", policy)
		return gc.deleteObject(ctx, s.identity, policy)
	}
}

// classifyReferences splits an object's owner references into owners that
// exist (solid), owners that do not (dangling), and owners being deleted
// in the foreground (waiting for their dependents).
func (gc *Controller) classifyReferences(ctx context.Context, item identity, refs []*metav1.OwnerReference) (solid, dangling, waiting []*metav1.OwnerReference, err error) {
	for _, ref := range refs {
		isDangling, owner, err := gc.isDangling(ctx, ref, item)
		if err != nil {
			return nil, nil, nil, err
		}
		switch {
		case isDangling:
			dangling = append(dangling, ref)
		case owner != nil && beingDeleted(owner) && hasFinalizer(owner, FinalizerForeground):
			waiting = append(waiting, ref)
		default:
			solid = append(solid, ref)
		}
	}
	return solid, dangling, waiting, nil
}

func (gc *Controller) isDangling(ctx context.Context, ref *metav1.OwnerReference, item identity) (bool, object.Object, error) {
	if gc.graph.absent.has(ref.GetUid()) {
		return true, nil, nil
	}
	k, ok := controller.KindFor(ref.GetApiVersion(), ref.GetKind())
	if !ok {
		return false, nil, nil // an owner of a kind podline does not serve: leave it be
	}
	id := ownerIdentity(ref, item.Namespace)
	if k.Resource.Namespaced && item.Namespace == "" {
		return false, nil, nil // a cluster-scoped object cannot have a namespaced owner
	}
	owner, _, err := gc.get(ctx, id)
	if apierrors.IsNotFound(err) {
		gc.graph.absent.add(ref.GetUid())
		return true, nil, nil
	}
	if err != nil {
		return false, nil, err
	}
	if owner.GetMetadata().GetUid() != ref.GetUid() {
		gc.graph.absent.add(ref.GetUid())
		return true, nil, nil
	}
	return false, owner, nil
}

// processDeletingDependents removes the foregroundDeletion finalizer of an
// owner once nothing blocks it, or pushes its blocking dependents along.
func (gc *Controller) processDeletingDependents(ctx context.Context, item *node, s snapshot) error {
	blocking := gc.graph.blockingDependents(item)
	if len(blocking) == 0 {
		gc.log.Info("dependents are gone, removing the foregroundDeletion finalizer", "object", s.identity.String())
		return gc.removeFinalizer(ctx, s.identity, FinalizerForeground)
	}
	for _, dep := range blocking {
		if !gc.graph.isDeletingDependents(dep) {
			gc.attemptToDelete.Add(dep)
		}
	}
	return nil
}

// ------------------------------------------------------ attemptToOrphan

func (gc *Controller) attemptToOrphanItem(ctx context.Context, owner *node) error {
	s := gc.graph.snapshot(owner)
	latest, known, err := gc.get(ctx, s.identity)
	if !known || apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ctx, span := telemetry.StartFromObject(ctx, latest, Component, "garbagecollector.orphan")
	defer span.End()
	uid := map[string]bool{s.identity.UID: true}
	for _, dep := range s.dependents {
		if err := gc.removeOwnerRefs(ctx, gc.graph.snapshot(dep).identity, uid); err != nil {
			return err
		}
	}
	gc.log.Info("orphaned dependents, removing the orphan finalizer", "object", s.identity.String(), "dependents", len(s.dependents))
	return gc.removeFinalizer(ctx, s.identity, FinalizerOrphan)
}
