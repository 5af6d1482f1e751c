package nodelifecycle

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/workqueue"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/controller-manager/internal/controller"
)

// Name is the controller's name in --controllers.
const Name = "nodelifecycle"

// Component is the event source and tracer name.
const Component = "node-controller"

// NodeLeaseNamespace holds the nodes' heartbeat Leases.
const NodeLeaseNamespace = "kube-node-lease"

// NodeNameIndex indexes pods by spec.nodeName.
const NodeNameIndex = "spec.nodeName"

// Controller is the node lifecycle controller.
type Controller struct {
	nodes       *client.Client[*corev1.Node]
	pods        *client.Client[*corev1.Pod]
	nodeLister  cache.Lister[*corev1.Node]
	leaseLister cache.Lister[*coordinationv1.Lease]
	podLister   cache.Lister[*corev1.Pod]
	podIndexer  cache.Indexer
	synced      []cache.InformerSynced
	queue       workqueue.RateLimitingInterface[string] // pods to check for eviction
	recorder    controller.EventRecorder
	clock       clock.Clock
	log         *slog.Logger

	grace, startupGrace, period time.Duration

	mu     sync.Mutex
	health map[string]*nodeHealth
}

// New builds the controller and registers its informers' handlers.
func New(c *controller.Context) (*Controller, error) {
	nc := &Controller{
		nodes:        client.Nodes(c.Conn),
		pods:         client.Pods(c.Conn),
		nodeLister:   controller.Lister[*corev1.Node](c),
		leaseLister:  controller.Lister[*coordinationv1.Lease](c),
		podLister:    controller.Lister[*corev1.Pod](c),
		queue:        c.NewQueue(),
		recorder:     c.Recorder(Component),
		clock:        c.GetClock(),
		log:          c.Logger(Name),
		grace:        c.Options.NodeMonitorGracePeriod,
		startupGrace: c.Options.NodeStartupGracePeriod,
		period:       c.Options.NodeMonitorPeriod,
		health:       map[string]*nodeHealth{},
	}
	podInf := controller.Informer[*corev1.Pod](c)
	if _, ok := podInf.GetIndexer().GetIndexers()[NodeNameIndex]; !ok {
		if err := podInf.AddIndexers(cache.Indexers{NodeNameIndex: func(o object.Object) ([]string, error) {
			if p, ok := o.(*corev1.Pod); ok && p.GetSpec().GetNodeName() != "" {
				return []string{p.GetSpec().GetNodeName()}, nil
			}
			return nil, nil
		}}); err != nil {
			return nil, err
		}
	}
	nc.podIndexer = podInf.GetIndexer()
	podReg, err := podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    nc.enqueuePod,
		UpdateFunc: func(_, o object.Object) { nc.enqueuePod(o) },
	})
	if err != nil {
		return nil, err
	}
	nodeReg, err := controller.Informer[*corev1.Node](c).AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o object.Object) { nc.enqueuePodsOn(o.GetMetadata().GetName()) },
		UpdateFunc: func(old, o object.Object) {
			if !slices.EqualFunc(old.(*corev1.Node).GetSpec().GetTaints(), o.(*corev1.Node).GetSpec().GetTaints(), func(a, b *corev1.Taint) bool { return proto.Equal(a, b) }) {
				nc.enqueuePodsOn(o.GetMetadata().GetName())
			}
		},
		DeleteFunc: func(o object.Object) {
			nc.mu.Lock()
			delete(nc.health, o.GetMetadata().GetName())
			nc.mu.Unlock()
		},
	})
	if err != nil {
		return nil, err
	}
	leaseReg, err := controller.Informer[*coordinationv1.Lease](c).AddEventHandler(cache.ResourceEventHandlerFuncs{})
	if err != nil {
		return nil, err
	}
	nc.synced = []cache.InformerSynced{podReg.HasSynced, nodeReg.HasSynced, leaseReg.HasSynced}
	return nc, nil
}

func (nc *Controller) enqueuePod(o object.Object) {
	if p, ok := o.(*corev1.Pod); ok && p.GetSpec().GetNodeName() != "" && p.GetMetadata().GetDeletionTimestamp() == nil {
		controller.Enqueue(nc.queue, p)
	}
}

func (nc *Controller) enqueuePodsOn(node string) {
	objs, err := nc.podIndexer.ByIndex(NodeNameIndex, node)
	if err != nil {
		return
	}
	for _, o := range objs {
		nc.enqueuePod(o)
	}
}

// Run checks node health every period and works the eviction queue until ctx is done.
func (nc *Controller) Run(ctx context.Context, workers int) error {
	if !cache.WaitForCacheSync(ctx, nc.synced...) {
		return controller.ErrCacheNotSynced
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			nc.MonitorNodeHealth(ctx)
			select {
			case <-ctx.Done():
				return
			case <-nc.clock.After(nc.period):
			}
		}
	})
	err := controller.RunWorkers(ctx, nc.log, nc.queue, workers, nc.SyncPod, nc.synced...)
	wg.Wait()
	return err
}

// MonitorNodeHealth looks at every node once.
func (nc *Controller) MonitorNodeHealth(ctx context.Context) {
	nodes, err := nc.nodeLister.List(nil)
	if err != nil {
		return
	}
	for _, node := range nodes {
		if err := nc.checkNode(ctx, node); err != nil && ctx.Err() == nil {
			nc.log.Info("node health update failed", "node", node.GetMetadata().GetName(), "err", err)
		}
	}
}

func (nc *Controller) checkNode(ctx context.Context, node *corev1.Node) error {
	name := node.GetMetadata().GetName()
	now := nc.clock.Now()
	lease, err := nc.leaseLister.Get(NodeLeaseNamespace, name)
	if err != nil {
		lease = nil
	}
	nc.mu.Lock()
	h := observe(nc.health[name], node, lease, now)
	nc.health[name] = h
	nc.mu.Unlock()

	grace := nc.grace
	if readyCondition(node) == nil {
		grace = nc.startupGrace
	}
	cur := node
	if h.overdue(now, grace) {
		wasReady := readyCondition(node).GetStatus() == controller.ConditionTrue
		next := object.Copy(node)
		if markUnknown(next, now) {
			ctx, span := telemetry.StartFromObject(ctx, node, Component, "nodelifecycle.markUnknown")
			nc.log.Info("node stopped posting status, marking it Unknown", "node", name, "lastSeen", h.probe)
			telemetry.Stamp(ctx, next)
			updated, err := nc.nodes.UpdateStatus(ctx, next)
			span.End()
			if err != nil {
				return err
			}
			cur = updated
			nc.recorder.Eventf(node, controller.EventTypeNormal, "NodeNotReady", "Node %s status is now: NodeNotReady", name)
			if wasReady {
				nc.markPodsNotReady(ctx, name)
			}
		}
	}
	taints, changed := wantTaints(cur, now)
	if !changed {
		return nil
	}
	next := object.Copy(cur)
	if next.Spec == nil {
		next.Spec = &corev1.NodeSpec{}
	}
	next.Spec.Taints = taints
	ctx, span := telemetry.StartFromObject(ctx, cur, Component, "nodelifecycle.taint")
	defer span.End()
	telemetry.Stamp(ctx, next)
	_, err = nc.nodes.Update(ctx, next)
	return err
}

// markPodsNotReady sets Ready=False on the pods of a node that stopped
// reporting, so Services stop sending them traffic.
func (nc *Controller) markPodsNotReady(ctx context.Context, node string) {
	objs, err := nc.podIndexer.ByIndex(NodeNameIndex, node)
	if err != nil {
		return
	}
	now := &metav1.Time{Seconds: nc.clock.Now().Unix()}
	for _, o := range objs {
		pod := o.(*corev1.Pod)
		c := controller.GetPodCondition(pod, controller.PodReady)
		if c == nil || c.GetStatus() == controller.ConditionFalse {
			continue
		}
		next := object.Copy(pod)
		rc := controller.GetPodCondition(next, controller.PodReady)
		rc.Status, rc.LastTransitionTime = controller.ConditionFalse, now
		telemetry.Stamp(ctx, next)
		if _, err := nc.pods.UpdateStatus(ctx, next); err != nil {
			nc.log.Info("could not mark pod not ready", "pod", object.Key(pod), "err", err)
		}
	}
}

// SyncPod evicts the pod with key namespace/name when its node's
// NoExecute taints call for it, or asks to be called again when they will.
func (nc *Controller) SyncPod(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := nc.podLister.Get(ns, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pod.GetSpec().GetNodeName() == "" || pod.GetMetadata().GetDeletionTimestamp() != nil {
		return nil
	}
	node, err := nc.nodeLister.Get("", pod.GetSpec().GetNodeName())
	if err != nil {
		return nil // no node: the pod garbage collector's business
	}
	now := nc.clock.Now()
	at, evict := evictionTime(pod, node.GetSpec().GetTaints(), now)
	if !evict {
		return nil
	}
	if at.After(now) {
		nc.queue.AddAfter(key, at.Sub(now))
		return nil
	}
	ctx, span := telemetry.StartFromObject(ctx, pod, Component, "nodelifecycle.evict")
	defer span.End()
	uid := pod.GetMetadata().GetUid()
	nc.recorder.Eventf(pod, controller.EventTypeNormal, "TaintManagerEviction", "Marking for deletion Pod %s", key)
	_, err = nc.pods.Delete(ctx, ns, name, &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{Uid: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
