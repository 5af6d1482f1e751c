package resourcequota

import (
	"context"
	"log/slog"
	"maps"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/workqueue"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	"podline.dev/pkg/quota"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/controller-manager/internal/controller"
)

// Name is the controller's name in --controllers.
const Name = "resourcequota"

// Component is the tracer name.
const Component = "resourcequota-controller"

// Controller keeps ResourceQuota status up to date.
type Controller struct {
	quotas      *client.Client[*corev1.ResourceQuota]
	quotaLister cache.Lister[*corev1.ResourceQuota]
	podLister   cache.Lister[*corev1.Pod]
	// counted are the indexers of the kinds counted by count/<resource>,
	// by group and resource.
	counted map[groupResource]cache.Indexer
	synced  []cache.InformerSynced
	queue   workqueue.RateLimitingInterface[string]
	clock   clock.Clock
	resync  time.Duration
	log     *slog.Logger
}

type groupResource struct{ group, resource string }

// New builds the controller.
func New(c *controller.Context) (*Controller, error) {
	rq := &Controller{
		quotas:      client.For[*corev1.ResourceQuota](c.Conn),
		quotaLister: controller.Lister[*corev1.ResourceQuota](c),
		podLister:   controller.Lister[*corev1.Pod](c),
		counted:     map[groupResource]cache.Indexer{},
		queue:       c.NewQueue(),
		clock:       c.GetClock(),
		resync:      c.Options.ResourceQuotaSyncPeriod,
		log:         c.Logger(Name),
	}
	if rq.resync <= 0 {
		rq.resync = controller.DefaultOptions().ResourceQuotaSyncPeriod
	}
	reg, err := controller.Informer[*corev1.ResourceQuota](c).AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o object.Object) { controller.Enqueue(rq.queue, o) },
		UpdateFunc: func(old, cur object.Object) {
			// Status writes (admission's charges, this controller's own)
			// are not a reason to recount; a new spec.hard is.
			if !quota.Equal(old.(*corev1.ResourceQuota).GetSpec().GetHard(), cur.(*corev1.ResourceQuota).GetSpec().GetHard()) {
				controller.Enqueue(rq.queue, cur)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	rq.synced = append(rq.synced, reg.HasSynced)
	for _, k := range controller.Kinds {
		if !k.Resource.Namespaced {
			continue
		}
		inf := k.Informer(c)
		gr := groupResource{k.Resource.Group.Name, k.Resource.Name}
		rq.counted[gr] = inf.GetIndexer()
		h := cache.ResourceEventHandlerFuncs{DeleteFunc: func(o object.Object) { rq.replenish(o, gr) }}
		if gr == (groupResource{"", "pods"}) {
			h.UpdateFunc = func(old, cur object.Object) {
				now := rq.clock.Now()
				if quota.PodCounts(old.(*corev1.Pod), now) && !quota.PodCounts(cur.(*corev1.Pod), now) {
					rq.replenish(cur, gr)
				}
			}
		}
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			return nil, err
		}
		rq.synced = append(rq.synced, reg.HasSynced)
	}
	return rq, nil
}

// replenish enqueues the quotas of o's namespace that track what o used.
func (rq *Controller) replenish(o object.Object, gr groupResource) {
	qs, err := rq.quotaLister.Namespace(o.GetMetadata().GetNamespace()).List(nil)
	if err != nil {
		return
	}
	for _, q := range qs {
		if tracks(q, gr) {
			controller.Enqueue(rq.queue, q)
		}
	}
}

// tracks reports whether q limits something objects of gr use.
func tracks(q *corev1.ResourceQuota, gr groupResource) bool {
	for name := range q.GetSpec().GetHard() {
		if gr == (groupResource{"", "pods"}) && quota.IsPodResource(name) {
			return true
		}
		if g, r, ok := quota.CountedResource(name); ok && g == gr.group && r == gr.resource {
			return true
		}
	}
	return false
}

// Run works the queue until ctx is done, enqueuing every quota each
// resync period.
func (rq *Controller) Run(ctx context.Context, workers int) error {
	go rq.resyncLoop(ctx)
	return controller.RunWorkers(ctx, rq.log, rq.queue, workers, rq.Sync, rq.synced...)
}

func (rq *Controller) resyncLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-rq.clock.After(rq.resync):
		}
		qs, err := rq.quotaLister.List(nil)
		if err != nil {
			continue
		}
		for _, q := range qs {
			controller.Enqueue(rq.queue, q)
		}
	}
}

// Sync recomputes the usage of the quota named key and writes its status
// if it changed.
func (rq *Controller) Sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		rq.log.Error("bad queue key", "key", key, "err", err)
		return nil
	}
	q, err := rq.quotaLister.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	used, err := rq.usage(q)
	if err != nil {
		return err
	}
	hard := maps.Clone(q.GetSpec().GetHard())
	if hard == nil {
		hard = map[string]string{}
	}
	if quota.Equal(hard, q.GetStatus().GetHard()) && quota.Equal(used, q.GetStatus().GetUsed()) {
		return nil
	}
	ctx, span := telemetry.StartFromObject(ctx, q, Component, "resourcequota.sync")
	defer span.End()
	next := object.Copy(q)
	next.Status = &corev1.ResourceQuotaStatus{Hard: hard, Used: used}
	telemetry.Stamp(ctx, next)
	_, err = rq.quotas.UpdateStatus(ctx, next)
	if apierrors.IsNotFound(err) {
		return nil
	}
	// A Conflict (admission charged the quota meanwhile) is retried from
	// the cache's newer copy.
	return err
}

// usage is q's status.used: the namespace's usage of every resource in
// spec.hard the controller measures, and the last value recorded for
// those it does not.
func (rq *Controller) usage(q *corev1.ResourceQuota) (map[string]string, error) {
	namespace := q.GetMetadata().GetNamespace()
	names := make([]string, 0, len(q.GetSpec().GetHard()))
	out := map[string]string{}
	for n := range q.GetSpec().GetHard() {
		names = append(names, n)
		if v, ok := q.GetStatus().GetUsed()[n]; ok {
			out[n] = v
		}
	}
	measured := quota.Usage{}
	if podNames := quota.PodResources(names); len(podNames) > 0 {
		pods, err := rq.podLister.Namespace(namespace).List(nil)
		if err != nil {
			return nil, err
		}
		measured = quota.PodsUsage(pods, rq.clock.Now()).Mask(podNames)
	}
	for _, n := range names {
		g, r, ok := quota.CountedResource(n)
		if !ok {
			continue
		}
		idx := rq.counted[groupResource{g, r}]
		if idx == nil {
			continue
		}
		objs, err := idx.ByIndex(cache.NamespaceIndex, namespace)
		if err != nil {
			return nil, err
		}
		measured[n] = int64(len(objs)) * 1000
	}
	maps.Copy(out, measured.Strings())
	return out, nil
}
