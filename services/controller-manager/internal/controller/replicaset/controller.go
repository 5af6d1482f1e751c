package replicaset

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

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
const Name = "replicaset"

// Component is the event source and tracer name.
const Component = "replicaset-controller"

// SlowStartInitialBatchSize is the first batch of creations; each next one doubles.
const SlowStartInitialBatchSize = 1

// ConditionReplicaFailure is set when pods could not be created or deleted.
const ConditionReplicaFailure = "ReplicaFailure"

// Controller is the ReplicaSet controller.
type Controller struct {
	rsClient     *client.Client[*appsv1.ReplicaSet]
	pods         *client.Client[*corev1.Pod]
	rsLister     cache.Lister[*appsv1.ReplicaSet]
	podLister    cache.Lister[*corev1.Pod]
	expectations *controller.Expectations
	synced       []cache.InformerSynced
	queue        workqueue.RateLimitingInterface[string]
	recorder     controller.EventRecorder
	clock        clock.Clock
	log          *slog.Logger
	burst        int
}

// New builds the controller and registers its informers' handlers.
func New(c *controller.Context) (*Controller, error) {
	rc := &Controller{
		rsClient:     client.ReplicaSets(c.Conn),
		pods:         client.Pods(c.Conn),
		rsLister:     controller.Lister[*appsv1.ReplicaSet](c),
		podLister:    controller.Lister[*corev1.Pod](c),
		expectations: controller.NewExpectations(c.GetClock()),
		queue:        c.NewQueue(),
		recorder:     c.Recorder(Component),
		clock:        c.GetClock(),
		log:          c.Logger(Name),
		burst:        c.Options.ReplicaSetBurst,
	}
	if rc.burst <= 0 {
		rc.burst = 500
	}
	rsReg, err := controller.Informer[*appsv1.ReplicaSet](c).AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o object.Object) { controller.Enqueue(rc.queue, o) },
		UpdateFunc: rc.updateReplicaSet,
		DeleteFunc: rc.deleteReplicaSet,
	})
	if err != nil {
		return nil, err
	}
	podReg, err := controller.Informer[*corev1.Pod](c).AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    rc.addPod,
		UpdateFunc: rc.updatePod,
		DeleteFunc: rc.deletePod,
	})
	if err != nil {
		return nil, err
	}
	rc.synced = []cache.InformerSynced{rsReg.HasSynced, podReg.HasSynced}
	return rc, nil
}

// Run works the queue until ctx is done.
func (rc *Controller) Run(ctx context.Context, workers int) error {
	return controller.RunWorkers(ctx, rc.log, rc.queue, workers, rc.Sync, rc.synced...)
}

// Expectations exposes the expectations, for tests.
func (rc *Controller) Expectations() *controller.Expectations { return rc.expectations }

// ------------------------------------------------------------ handlers

func (rc *Controller) updateReplicaSet(oldObj, newObj object.Object) {
	old, cur := oldObj.(*appsv1.ReplicaSet), newObj.(*appsv1.ReplicaSet)
	if old.GetMetadata().GetUid() != cur.GetMetadata().GetUid() {
		rc.deleteReplicaSet(old)
	}
	controller.Enqueue(rc.queue, cur)
}

func (rc *Controller) deleteReplicaSet(o object.Object) {
	key, ok := controller.KeyOf(o)
	if !ok {
		return
	}
	rc.expectations.Delete(key)
	rc.queue.Add(key)
}

// resolve is the ReplicaSet a controllerRef names, if it is the one in the cache.
func (rc *Controller) resolve(namespace string, ref *metav1.OwnerReference) *appsv1.ReplicaSet {
	return controller.ResolveControllerRef(rc.rsLister, namespace, ref)
}

// replicaSetsFor lists the ReplicaSets whose selector matches an orphan pod.
func (rc *Controller) replicaSetsFor(pod *corev1.Pod) []*appsv1.ReplicaSet {
	return controller.SelectingOwners(rc.rsLister, func(rs *appsv1.ReplicaSet) *metav1.LabelSelector { return rs.GetSpec().GetSelector() }, pod)
}

func (rc *Controller) addPod(o object.Object) {
	pod := o.(*corev1.Pod)
	if pod.GetMetadata().GetDeletionTimestamp() != nil {
		// Seen already marked for deletion (a relist): count it as deleted.
		rc.deletePod(pod)
		return
	}
	if ref := controller.GetControllerOf(pod); ref != nil {
		rs := rc.resolve(pod.GetMetadata().GetNamespace(), ref)
		if rs == nil {
			return
		}
		key := object.Key(rs)
		rc.expectations.CreationObserved(key)
		rc.queue.Add(key)
		return
	}
	for _, rs := range rc.replicaSetsFor(pod) {
		controller.Enqueue(rc.queue, rs)
	}
}

func (rc *Controller) updatePod(oldObj, newObj object.Object) {
	old, cur := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
	if old.GetMetadata().GetResourceVersion() == cur.GetMetadata().GetResourceVersion() {
		return
	}
	labelChanged := !maps.Equal(old.GetMetadata().GetLabels(), cur.GetMetadata().GetLabels())
	if cur.GetMetadata().GetDeletionTimestamp() != nil {
		// Graceful deletion: the pod stops counting now, not when it is gone.
		rc.deletePod(cur)
		if labelChanged {
			rc.deletePod(old)
		}
		return
	}
	curRef, oldRef := controller.GetControllerOf(cur), controller.GetControllerOf(old)
	refChanged := !proto.Equal(curRef, oldRef)
	if refChanged && oldRef != nil {
		if rs := rc.resolve(old.GetMetadata().GetNamespace(), oldRef); rs != nil {
			controller.Enqueue(rc.queue, rs)
		}
	}
	if curRef != nil {
		rs := rc.resolve(cur.GetMetadata().GetNamespace(), curRef)
		if rs == nil {
			return
		}
		controller.Enqueue(rc.queue, rs)
		// A pod that just became ready becomes available after minReadySeconds.
		if mrs := rs.GetSpec().GetMinReadySeconds(); mrs > 0 && !controller.IsPodReady(old) && controller.IsPodReady(cur) {
			rc.queue.AddAfter(object.Key(rs), time.Duration(mrs)*time.Second+time.Second)
		}
		return
	}
	if labelChanged || refChanged {
		for _, rs := range rc.replicaSetsFor(cur) {
			controller.Enqueue(rc.queue, rs)
		}
	}
}

func (rc *Controller) deletePod(o object.Object) {
	pod, ok := cache.As[*corev1.Pod](o)
	if !ok {
		return
	}
	rs := rc.resolve(pod.GetMetadata().GetNamespace(), controller.GetControllerOf(pod))
	if rs == nil {
		return
	}
	key := object.Key(rs)
	rc.expectations.DeletionObserved(key, object.Key(pod))
	rc.queue.Add(key)
}

// ---------------------------------------------------------------- sync

// Sync reconciles the ReplicaSet with key namespace/name.
func (rc *Controller) Sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		rc.log.Error("bad key", "key", key, "err", err)
		return nil
	}
	rs, err := rc.rsLister.Get(ns, name)
	if apierrors.IsNotFound(err) {
		rc.expectations.Delete(key)
		return nil
	}
	if err != nil {
		return err
	}
	ctx, span := telemetry.StartFromObject(ctx, rs, Component, "replicaset.sync")
	defer span.End()

	needsSync := rc.expectations.Satisfied(key)
	selector, err := labels.FromLabelSelector(rs.GetSpec().GetSelector())
	if err != nil {
		rc.recorder.Eventf(rs, controller.EventTypeWarning, "InvalidSelector", "%v", err)
		return nil
	}
	all, err := rc.podLister.Namespace(ns).List(nil)
	if err != nil {
		return err
	}
	pods, err := rc.claimPods(ctx, rs, selector, controller.FilterActivePods(all))
	if err != nil {
		return err
	}
	var manageErr error
	if needsSync && rs.GetMetadata().GetDeletionTimestamp() == nil {
		manageErr = rc.manageReplicas(ctx, rs, pods)
	}
	status := calculateStatus(rs, pods, manageErr, rc.clock.Now())
	updated, err := rc.updateStatus(ctx, rs, status)
	if err != nil {
		return err
	}
	if manageErr == nil {
		if mrs := updated.GetSpec().GetMinReadySeconds(); mrs > 0 &&
			updated.GetStatus().GetReadyReplicas() == replicas(updated) && updated.GetStatus().GetAvailableReplicas() != replicas(updated) {
			rc.queue.AddAfter(key, time.Duration(mrs)*time.Second)
		}
	}
	return manageErr
}

func replicas(rs *appsv1.ReplicaSet) int32 {
	if r := rs.GetSpec().Replicas; r != nil {
		return *r
	}
	return 1
}

func (rc *Controller) claimPods(ctx context.Context, rs *appsv1.ReplicaSet, selector labels.Selector, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	m := controller.NewRefManager(rs, controller.ResourceOf[*appsv1.ReplicaSet](), selector, rc.pods,
		func(ctx context.Context) (object.Object, error) {
			return rc.rsClient.Get(ctx, rs.GetMetadata().GetNamespace(), rs.GetMetadata().GetName())
		})
	return m.Claim(ctx, pods)
}

// manageReplicas creates or deletes pods to close the gap to spec.replicas.
func (rc *Controller) manageReplicas(ctx context.Context, rs *appsv1.ReplicaSet, pods []*corev1.Pod) error {
	key := object.Key(rs)
	diff := len(pods) - int(replicas(rs))
	switch {
	case diff < 0:
		n := min(-diff, rc.burst)
		rc.expectations.ExpectCreations(key, n)
		ref := controller.NewControllerRef(rs, controller.ResourceOf[*appsv1.ReplicaSet]())
		ok, err := slowStartBatch(n, SlowStartInitialBatchSize, func() error { return rc.createPod(ctx, rs, ref) })
		// Creations never made will never be observed.
		for range n - ok {
			rc.expectations.CreationObserved(key)
		}
		return err
	case diff > 0:
		n := min(diff, rc.burst)
		victims := podsToDelete(pods, rc.relatedPods(rs), n)
		podKeys := make([]string, len(victims))
		for i, p := range victims {
			podKeys[i] = object.Key(p)
		}
		rc.expectations.ExpectDeletions(key, podKeys)
		var wg sync.WaitGroup
		errs := make(chan error, len(victims))
		for _, p := range victims {
			wg.Go(func() {
				if err := rc.deletePodOf(ctx, rs, p); err != nil {
					rc.expectations.DeletionObserved(key, object.Key(p))
					if !apierrors.IsNotFound(err) {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		return <-errs
	}
	return nil
}

// slowStartBatch calls fn count times in batches of 1, 2, 4, ... running
// each batch in parallel, and stops after the first batch with a failure.
// It returns the number of successful calls and the first error.
func slowStartBatch(count, initial int, fn func() error) (int, error) {
	remaining, successes := count, 0
	for batch := min(remaining, initial); batch > 0; batch = min(2*batch, remaining) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for range batch {
			wg.Go(func() {
				if err := fn(); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		successes += batch - len(errs)
		if len(errs) > 0 {
			return successes, <-errs
		}
		remaining -= batch
	}
	return successes, nil
}

// PodFromTemplate is the pod a ReplicaSet creates.
func PodFromTemplate(rs *appsv1.ReplicaSet, ref *metav1.OwnerReference) *corev1.Pod {
	t := rs.GetSpec().GetTemplate()
	tm := t.GetMetadata()
	pod := &corev1.Pod{
		ApiVersion: "v1", Kind: "Pod",
		Metadata: &metav1.ObjectMeta{
			GenerateName:    rs.GetMetadata().GetName() + "-",
			Namespace:       rs.GetMetadata().GetNamespace(),
			Labels:          maps.Clone(tm.GetLabels()),
			Annotations:     maps.Clone(tm.GetAnnotations()),
			Finalizers:      slices.Clone(tm.GetFinalizers()),
			OwnerReferences: []*metav1.OwnerReference{ref},
		},
		Spec: proto.Clone(t.GetSpec()).(*corev1.PodSpec),
	}
	if pod.Spec == nil {
		pod.Spec = &corev1.PodSpec{}
	}
	return pod
}

func (rc *Controller) createPod(ctx context.Context, rs *appsv1.ReplicaSet, ref *metav1.OwnerReference) error {
	pod := PodFromTemplate(rs, ref)
	telemetry.Stamp(ctx, pod)
	created, err := rc.pods.Create(ctx, pod)
	if err != nil {
		rc.recorder.Eventf(rs, controller.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
		return err
	}
	rc.recorder.Eventf(rs, controller.EventTypeNormal, "SuccessfulCreate", "Created pod: %s", created.GetMetadata().GetName())
	return nil
}

func (rc *Controller) deletePodOf(ctx context.Context, rs *appsv1.ReplicaSet, pod *corev1.Pod) error {
	md := pod.GetMetadata()
	uid := md.GetUid()
	_, err := rc.pods.Delete(ctx, md.GetNamespace(), md.GetName(), &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{Uid: &uid}})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			rc.recorder.Eventf(rs, controller.EventTypeWarning, "FailedDelete", "Error deleting: %v", err)
		}
		return err
	}
	rc.recorder.Eventf(rs, controller.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %s", md.GetName())
	return nil
}

// relatedPods are the active pods of every ReplicaSet with rs's controller
// (its siblings in a rollout), or rs's own without one.
func (rc *Controller) relatedPods(rs *appsv1.ReplicaSet) []*corev1.Pod {
	owners := map[string]bool{rs.GetMetadata().GetUid(): true}
	if ref := controller.GetControllerOf(rs); ref != nil {
		siblings, _ := rc.rsLister.Namespace(rs.GetMetadata().GetNamespace()).List(nil)
		for _, s := range siblings {
			if r := controller.GetControllerOf(s); r != nil && r.GetUid() == ref.GetUid() {
				owners[s.GetMetadata().GetUid()] = true
			}
		}
	}
	all, _ := rc.podLister.Namespace(rs.GetMetadata().GetNamespace()).List(nil)
	var out []*corev1.Pod
	for _, p := range all {
		if r := controller.GetControllerOf(p); r != nil && owners[r.GetUid()] {
			out = append(out, p)
		}
	}
	return out
}

// calculateStatus counts the pods, and sets or clears ReplicaFailure.
func calculateStatus(rs *appsv1.ReplicaSet, pods []*corev1.Pod, manageErr error, now time.Time) *appsv1.ReplicaSetStatus {
	s := proto.Clone(rs.GetStatus()).(*appsv1.ReplicaSetStatus)
	if s == nil {
		s = &appsv1.ReplicaSetStatus{}
	}
	templateSel := labels.SelectorFromSet(rs.GetSpec().GetTemplate().GetMetadata().GetLabels())
	var labeled, ready, available int32
	for _, p := range pods {
		if templateSel.Matches(p.GetMetadata().GetLabels()) {
			labeled++
		}
		if controller.IsPodReady(p) {
			ready++
			if controller.IsPodAvailable(p, rs.GetSpec().GetMinReadySeconds(), now) {
				available++
			}
		}
	}
	failure := -1
	for i, c := range s.Conditions {
		if c.GetType() == ConditionReplicaFailure {
			failure = i
		}
	}
	switch {
	case manageErr != nil && failure < 0:
		reason := "FailedCreate"
		if len(pods) > int(replicas(rs)) {
			reason = "FailedDelete"
		}
		s.Conditions = append(s.Conditions, &appsv1.ReplicaSetCondition{Type: ConditionReplicaFailure, Status: controller.ConditionTrue,
			Reason: reason, Message: manageErr.Error(), LastTransitionTime: &metav1.Time{Seconds: now.Unix()}})
	case manageErr == nil && failure >= 0:
		s.Conditions = slices.Delete(s.Conditions, failure, failure+1)
	}
	s.Replicas, s.FullyLabeledReplicas, s.ReadyReplicas, s.AvailableReplicas = int32(len(pods)), labeled, ready, available
	return s
}

// updateStatus writes status when it or the observed generation changed.
func (rc *Controller) updateStatus(ctx context.Context, rs *appsv1.ReplicaSet, status *appsv1.ReplicaSetStatus) (*appsv1.ReplicaSet, error) {
	status.ObservedGeneration = rs.GetMetadata().GetGeneration()
	if proto.Equal(status, rs.GetStatus()) {
		return rs, nil
	}
	next := object.Copy(rs)
	next.Status = status
	telemetry.Stamp(ctx, next)
	updated, err := rc.rsClient.UpdateStatus(ctx, next)
	if err != nil {
		return nil, fmt.Errorf("update status of %s: %w", object.Key(rs), err)
	}
	return updated, nil
}
