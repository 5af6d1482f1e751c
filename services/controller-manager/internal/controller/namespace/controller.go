package namespace

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/workqueue"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/controller-manager/internal/controller"
)

// Name is the controller's name in --controllers.
const Name = "namespace"

// Component is the tracer name.
const Component = "namespace-controller"

// FinalizerKubernetes is the finalizer the namespace controller removes.
const FinalizerKubernetes = "kubernetes"

// PhaseTerminating is the phase of a namespace being deleted.
const PhaseTerminating = "Terminating"

// Controller is the namespace controller.
type Controller struct {
	namespaces *client.Client[*corev1.Namespace]
	nsLister   cache.Lister[*corev1.Namespace]
	content    []contentClient
	synced     []cache.InformerSynced
	queue      workqueue.RateLimitingInterface[string]
	log        *slog.Logger
	retry      time.Duration
}

type contentClient struct {
	resource string
	client   controller.ObjectClient
}

// New builds the controller.
func New(c *controller.Context) (*Controller, error) {
	nc := &Controller{
		namespaces: client.Namespaces(c.Conn),
		nsLister:   controller.Lister[*corev1.Namespace](c),
		queue:      c.NewQueue(),
		log:        c.Logger(Name),
		retry:      c.Options.NamespaceRetryPeriod,
	}
	if nc.retry <= 0 {
		nc.retry = 5 * time.Second
	}
	for _, k := range controller.Kinds {
		if k.Resource.Namespaced {
			nc.content = append(nc.content, contentClient{resource: k.Resource.GroupResource(), client: k.Client(c.Conn)})
		}
	}
	reg, err := controller.Informer[*corev1.Namespace](c).AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: nc.enqueueIfDeleting,
		UpdateFunc: func(_, o object.Object) {
			nc.enqueueIfDeleting(o)
		},
		DeleteFunc: func(o object.Object) { controller.Enqueue(nc.queue, o) },
	})
	if err != nil {
		return nil, err
	}
	nc.synced = []cache.InformerSynced{reg.HasSynced}
	return nc, nil
}

func (nc *Controller) enqueueIfDeleting(o object.Object) {
	if o.GetMetadata().GetDeletionTimestamp() != nil {
		controller.Enqueue(nc.queue, o)
	}
}

// Run works the queue until ctx is done.
func (nc *Controller) Run(ctx context.Context, workers int) error {
	return controller.RunWorkers(ctx, nc.log, nc.queue, workers, nc.Sync, nc.synced...)
}

// Sync deletes the content of the namespace named key if it is being
// deleted (or is gone), and finalizes it once empty.
func (nc *Controller) Sync(ctx context.Context, key string) error {
	ns, err := nc.nsLister.Get("", key)
	if apierrors.IsNotFound(err) {
		// Gone from the cache: make sure it is gone, not just new.
		live, err := nc.namespaces.Get(ctx, "", key)
		switch {
		case apierrors.IsNotFound(err):
			return nc.emptyOrRetry(ctx, key)
		case err != nil:
			return err
		}
		ns = live
	} else if err != nil {
		return err
	}
	if ns.GetMetadata().GetDeletionTimestamp() == nil {
		return nil
	}
	ctx, span := telemetry.StartFromObject(ctx, ns, Component, "namespace.sync")
	defer span.End()
	if ns.GetStatus().GetPhase() != PhaseTerminating {
		next := object.Copy(ns)
		if next.Status == nil {
			next.Status = &corev1.NamespaceStatus{}
		}
		next.Status.Phase = PhaseTerminating
		telemetry.Stamp(ctx, next)
		updated, err := nc.namespaces.UpdateStatus(ctx, next)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		ns = updated
	}
	remaining, err := nc.deleteContent(ctx, key)
	if err != nil {
		return err
	}
	if remaining > 0 {
		nc.log.Info("namespace content is still going away", "namespace", key, "remaining", remaining)
		nc.queue.AddAfter(key, nc.retry)
		return nil
	}
	return nc.finalize(ctx, ns)
}

func (nc *Controller) emptyOrRetry(ctx context.Context, name string) error {
	remaining, err := nc.deleteContent(ctx, name)
	if err != nil {
		return err
	}
	if remaining > 0 {
		nc.queue.AddAfter(name, nc.retry)
	}
	return nil
}

// deleteContent deletes every object in the namespace and returns how many
// are still there afterwards.
func (nc *Controller) deleteContent(ctx context.Context, namespace string) (int, error) {
	deleted := 0
	for _, c := range nc.content {
		items, err := c.client.List(ctx, namespace)
		if err != nil {
			return 0, err
		}
		for _, it := range items {
			if it.GetMetadata().GetDeletionTimestamp() != nil {
				continue
			}
			err := c.client.Delete(ctx, namespace, it.GetMetadata().GetName(), nil)
			if err != nil && !apierrors.IsNotFound(err) {
				return 0, err
			}
			deleted++
		}
	}
	if deleted > 0 {
		nc.log.Info("deleted namespace content", "namespace", namespace, "objects", deleted)
	}
	remaining := 0
	for _, c := range nc.content {
		items, err := c.client.List(ctx, namespace)
		if err != nil {
			return 0, err
		}
		remaining += len(items)
	}
	return remaining, nil
}

// finalize removes the kubernetes finalizer, which lets the namespace go.
func (nc *Controller) finalize(ctx context.Context, ns *corev1.Namespace) error {
	next := object.Copy(ns)
	changed := false
	if i := slices.Index(next.GetSpec().GetFinalizers(), FinalizerKubernetes); i >= 0 {
		next.Spec.Finalizers = slices.Delete(next.Spec.Finalizers, i, i+1)
		changed = true
	}
	if i := slices.Index(next.GetMetadata().GetFinalizers(), FinalizerKubernetes); i >= 0 {
		next.Metadata.Finalizers = slices.Delete(next.Metadata.Finalizers, i, i+1)
		changed = true
	}
	if !changed {
		return nil
	}
	telemetry.Stamp(ctx, next)
	_, err := nc.namespaces.Update(ctx, next)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
