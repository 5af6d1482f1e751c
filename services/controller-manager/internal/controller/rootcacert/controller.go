package rootcacert

import (
	"context"
	"log/slog"
	"maps"

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
const Name = "root-ca-cert-publisher"

// Component is the tracer name.
const Component = "root-ca-cert-publisher"

// Kubernetes' names for the published ConfigMap.
const (
	ConfigMapName = "kube-root-ca.crt"
	DataKey       = "ca.crt"
	// DescriptionAnnotation says what the ConfigMap is for, as Kubernetes'
	// publisher annotates it.
	DescriptionAnnotation = "kubernetes.io/description"
	Description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."
)

// Controller publishes the root CA in every namespace.
type Controller struct {
	rootCA     string
	configMaps *client.Client[*corev1.ConfigMap]
	nsLister   cache.Lister[*corev1.Namespace]
	cmLister   cache.Lister[*corev1.ConfigMap]
	synced     []cache.InformerSynced
	queue      workqueue.RateLimitingInterface[string]
	log        *slog.Logger
}

// New builds the controller publishing c.Options.RootCA.
func New(c *controller.Context) (*Controller, error) {
	rc := &Controller{
		rootCA:     c.Options.RootCA,
		configMaps: client.ConfigMaps(c.Conn),
		nsLister:   controller.Lister[*corev1.Namespace](c),
		cmLister:   controller.Lister[*corev1.ConfigMap](c),
		queue:      c.NewQueue(),
		log:        c.Logger(Name),
	}
	nsReg, err := controller.EnqueueNamespaces(c, rc.queue)
	if err != nil {
		return nil, err
	}
	enqueueNamespace := func(o object.Object) {
		if md := o.GetMetadata(); md.GetName() == ConfigMapName {
			rc.queue.Add(md.GetNamespace())
		}
	}
	cmReg, err := controller.Informer[*corev1.ConfigMap](c).AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, o object.Object) { enqueueNamespace(o) },
		DeleteFunc: enqueueNamespace,
	})
	if err != nil {
		return nil, err
	}
	rc.synced = []cache.InformerSynced{nsReg.HasSynced, cmReg.HasSynced}
	return rc, nil
}

// Run works the queue until ctx is done.
func (rc *Controller) Run(ctx context.Context, workers int) error {
	return controller.RunWorkers(ctx, rc.log, rc.queue, workers, rc.Sync, rc.synced...)
}

// Sync makes the kube-root-ca.crt ConfigMap of the namespace named key
// hold the root CA, if the namespace is Active.
func (rc *Controller) Sync(ctx context.Context, key string) error {
	ns, err := controller.GetActiveNamespace(rc.nsLister, key)
	if ns == nil {
		return err
	}
	want := map[string]string{DataKey: rc.rootCA}
	cm, err := rc.cmLister.Get(key, ConfigMapName)
	switch {
	case apierrors.IsNotFound(err):
		ctx, span := telemetry.StartFromObject(ctx, ns, Component, "rootcacert.sync")
		defer span.End()
		next := &corev1.ConfigMap{
			Metadata: &metav1.ObjectMeta{Name: ConfigMapName, Namespace: key,
				Annotations: map[string]string{DescriptionAnnotation: Description}},
			Data: want,
		}
		telemetry.Stamp(ctx, next)
		_, err := rc.configMaps.Create(ctx, next)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err == nil {
			rc.log.Info("published the root CA", "namespace", key)
		}
		return err
	case err != nil:
		return err
	}
	if maps.Equal(cm.GetData(), want) && len(cm.GetBinaryData()) == 0 && cm.GetMetadata().GetAnnotations()[DescriptionAnnotation] != "" {
		return nil
	}
	ctx, span := telemetry.StartFromObject(ctx, cm, Component, "rootcacert.sync")
	defer span.End()
	next := object.Copy(cm)
	next.Data = want
	next.BinaryData = nil
	if next.Metadata.Annotations == nil {
		next.Metadata.Annotations = map[string]string{}
	}
	next.Metadata.Annotations[DescriptionAnnotation] = Description
	telemetry.Stamp(ctx, next)
	_, err = rc.configMaps.Update(ctx, next)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		rc.log.Info("repaired the root CA", "namespace", key)
	}
	return err
}
