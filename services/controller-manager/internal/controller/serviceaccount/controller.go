package serviceaccount

import (
	"context"
	"log/slog"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/workqueue"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/controller-manager/internal/controller"
)

// Name is the controller's name in --controllers.
const Name = "serviceaccount"

// Component is the tracer name.
const Component = "serviceaccount-controller"

// DefaultServiceAccount is the account every namespace gets.
const DefaultServiceAccount = "default"

// Controller ensures the default ServiceAccount of every namespace.
type Controller struct {
	accounts *client.Client[*corev1.ServiceAccount]
	nsLister cache.Lister[*corev1.Namespace]
	saLister cache.Lister[*corev1.ServiceAccount]
	synced   []cache.InformerSynced
	queue    workqueue.RateLimitingInterface[string]
	log      *slog.Logger
}

// New builds the controller.
func New(c *controller.Context) (*Controller, error) {
	sc := &Controller{
		accounts: client.ServiceAccounts(c.Conn),
		nsLister: controller.Lister[*corev1.Namespace](c),
		saLister: controller.Lister[*corev1.ServiceAccount](c),
		queue:    c.NewQueue(),
		log:      c.Logger(Name),
	}
	nsReg, err := controller.EnqueueNamespaces(c, sc.queue)
	if err != nil {
		return nil, err
	}
	saReg, err := controller.Informer[*corev1.ServiceAccount](c).AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(o object.Object) {
			if md := o.GetMetadata(); md.GetName() == DefaultServiceAccount {
				sc.queue.Add(md.GetNamespace())
			}
		},
	})
	if err != nil {
		return nil, err
	}
	sc.synced = []cache.InformerSynced{nsReg.HasSynced, saReg.HasSynced}
	return sc, nil
}

// Run works the queue until ctx is done.
func (sc *Controller) Run(ctx context.Context, workers int) error {
	return controller.RunWorkers(ctx, sc.log, sc.queue, workers, sc.Sync, sc.synced...)
}

// Sync creates the default ServiceAccount of the namespace named key if it
// is Active and has none.
func (sc *Controller) Sync(ctx context.Context, key string) error {
	ns, err := controller.GetActiveNamespace(sc.nsLister, key)
	if ns == nil {
		return err
	}
	if _, err := sc.saLister.Get(key, DefaultServiceAccount); err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	ctx, span := telemetry.StartFromObject(ctx, ns, Component, "serviceaccount.sync")
	defer span.End()
	sa := &corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Name: DefaultServiceAccount, Namespace: key}}
	telemetry.Stamp(ctx, sa)
	_, err = sc.accounts.Create(ctx, sa)
	switch {
	case err == nil:
		sc.log.Info("created service account", "namespace", key, "name", DefaultServiceAccount)
		return nil
	case apierrors.IsAlreadyExists(err):
		return nil
	}
	// A namespace that began terminating since the cache saw it refuses
	// the create; the retry finds it no longer Active.
	return err
}
