package queue

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
)

// Kubernetes' defaults.
const (
	DefaultPodInitialBackoff                 = 1 * time.Second
	DefaultPodMaxBackoff                     = 10 * time.Second
	DefaultPodMaxInUnschedulablePodsDuration = 5 * time.Minute
	// unschedulableFlushInterval is how often the pool is checked for pods
	// that have waited longer than the maximum.
	unschedulableFlushInterval = 30 * time.Second
	// backoffFlushInterval bounds how long the backoff loop sleeps.
	backoffFlushInterval = 1 * time.Second
)

// Profile is what the queue needs from a profile's framework.
type Profile interface {
	ProfileName() string
	RunPreEnqueuePlugins(ctx context.Context, pod *corev1.Pod) *framework.Status
	EventsToRegister() map[string][]framework.ClusterEventWithHint
}

// DefaultSchedulerName is the profile of a pod with an empty schedulerName.
const DefaultSchedulerName = "default-scheduler"

// ProfileOf is the profile name a pod asks for.
func ProfileOf(pod *corev1.Pod) string {
	if n := pod.GetSpec().GetSchedulerName(); n != "" {
		return n
	}
	return DefaultSchedulerName
}

// Option configures a PriorityQueue.
type Option func(*PriorityQueue)

// WithClock sets the clock (default the wall clock).
func WithClock(c clock.Clock) Option { return func(q *PriorityQueue) { q.clock = c } }

// WithPodInitialBackoff sets the first backoff (default 1 s).
func WithPodInitialBackoff(d time.Duration) Option {
	return func(q *PriorityQueue) { q.initialBackoff = d }
}

// WithPodMaxBackoff caps the backoff (default 10 s).
func WithPodMaxBackoff(d time.Duration) Option { return func(q *PriorityQueue) { q.maxBackoff = d } }

// WithPodMaxInUnschedulablePodsDuration sets how long a pod may stay in the
// pool before the periodic flush moves it (default 5 minutes).
func WithPodMaxInUnschedulablePodsDuration(d time.Duration) Option {
	return func(q *PriorityQueue) { q.maxInUnschedulable = d }
}

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(q *PriorityQueue) { q.log = l } }

// PriorityQueue is the scheduling queue. It is safe for concurrent use.
type PriorityQueue struct {
	clock              clock.Clock
	initialBackoff     time.Duration
	maxBackoff         time.Duration
	maxInUnschedulable time.Duration
	log                *slog.Logger
	profiles           map[string]Profile

	mu            sync.Mutex
	cond          *sync.Cond
	activeQ       *podHeap
	backoffQ      *podHeap
	unschedulable map[string]*framework.QueuedPodInfo
	// inFlight holds the pods popped and not yet done with.
	inFlight map[string]bool
	// schedulingCycle counts Pops; moveRequestCycle is the cycle of the
	// last move request, so that a pod that failed while an event
	// happened is retried rather than parked.
	schedulingCycle  int64
	moveRequestCycle int64
	closed           bool
	// backoffWake is poked when a pod enters backoffQ, so the flush loop re-arms.
	backoffWake chan struct{}

	*nominator
}

// New returns a queue ordering pods with less and gating them with profiles' PreEnqueue plugins.
func New(less func(a, b *framework.QueuedPodInfo) bool, profiles []Profile, opts ...Option) *PriorityQueue {
	q := &PriorityQueue{
		clock:              clock.Real{},
		initialBackoff:     DefaultPodInitialBackoff,
		maxBackoff:         DefaultPodMaxBackoff,
		maxInUnschedulable: DefaultPodMaxInUnschedulablePodsDuration,
		log:                slog.Default(),
		profiles:           map[string]Profile{},
		activeQ:            newPodHeap(less),
		unschedulable:      map[string]*framework.QueuedPodInfo{},
		inFlight:           map[string]bool{},
		moveRequestCycle:   -1,
		backoffWake:        make(chan struct{}, 1),
		nominator:          newNominator(),
	}
	for _, p := range profiles {
		q.profiles[p.ProfileName()] = p
	}
	for _, o := range opts {
		o(q)
	}
	q.backoffQ = newPodHeap(func(a, b *framework.QueuedPodInfo) bool {
		return q.backoffTime(a).Before(q.backoffTime(b))
	})
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Run flushes backoffQ as backoffs expire and the unschedulable pool every
// 30 s, until ctx is done; then it closes the queue.
func (q *PriorityQueue) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { q.backoffLoop(ctx) })
	wg.Go(func() {
		for {
			t := q.clock.NewTimer(unschedulableFlushInterval)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C():
				q.flushUnschedulableLeftover()
			}
		}
	})
	<-ctx.Done()
	q.Close()
	wg.Wait()
}

func (q *PriorityQueue) backoffLoop(ctx context.Context) {
	for {
		q.flushBackoffCompleted()
		wait := backoffFlushInterval
		q.mu.Lock()
		if head := q.backoffQ.peek(); head != nil {
			wait = min(wait, max(q.backoffTime(head).Sub(q.clock.Now()), time.Millisecond))
		}
		q.mu.Unlock()
		t := q.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-q.backoffWake:
			t.Stop()
		case <-t.C():
		}
	}
}

// Close wakes Pop, which returns ErrClosed from then on.
func (q *PriorityQueue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}

func (q *PriorityQueue) newQueuedPodInfo(pod *corev1.Pod, plugins ...string) *framework.QueuedPodInfo {
	now := q.clock.Now()
	return &framework.QueuedPodInfo{
		PodInfo:              framework.NewPodInfo(pod),
		Timestamp:            now,
		UnschedulablePlugins: setOf(plugins...),
	}
}

func setOf(names ...string) map[string]bool {
	if len(names) == 0 {
		return nil
	}
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Add queues a new pending pod.
func (q *PriorityQueue) Add(pod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	pi := q.newQueuedPodInfo(pod)
	key := pi.Key()
	q.backoffQ.delete(key)
	delete(q.unschedulable, key)
	q.moveToActiveQ(pi, "PodAdd")
	q.nominator.AddNominatedPod(pi.PodInfo, nil)
}

// moveToActiveQ puts pi in activeQ, or in the pool (gated) when a
// PreEnqueue plugin holds it back. Called with mu held.
func (q *PriorityQueue) moveToActiveQ(pi *framework.QueuedPodInfo, event string) bool {
	if prof, ok := q.profiles[ProfileOf(pi.Pod)]; ok {
		if s := prof.RunPreEnqueuePlugins(context.Background(), pi.Pod); !s.IsSuccess() {
			pi.Gated = true
			pi.PendingPlugins = setOf(s.Plugin())
			pi.UnschedulablePlugins = nil
			q.unschedulable[pi.Key()] = pi
			q.log.Debug("pod is gated", "pod", pi.Key(), "plugin", s.Plugin(), "reason", s.Message())
			return false
		}
	}
	pi.Gated = false
	q.activeQ.addOrUpdate(pi)
	delete(q.unschedulable, pi.Key())
	q.backoffQ.delete(pi.Key())
	q.cond.Broadcast()
	q.log.Debug("pod moved to activeQ", "pod", pi.Key(), "event", event)
	return true
}

// Pop blocks until a pod is in activeQ and returns it, counting the attempt.
func (q *PriorityQueue) Pop(ctx context.Context) (*framework.QueuedPodInfo, error) {
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		q.mu.Unlock()
		q.cond.Broadcast()
	})
	defer stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.activeQ.Len() == 0 {
		if q.closed {
			return nil, ErrClosed
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		q.cond.Wait()
	}
	pi := q.activeQ.pop()
	pi.Attempts++
	q.schedulingCycle++
	if pi.InitialAttemptTimestamp == nil {
		now := q.clock.Now()
		pi.InitialAttemptTimestamp = &now
	}
	q.inFlight[pi.Key()] = true
	return pi, nil
}

// SchedulingCycle is the number of pods popped so far.
func (q *PriorityQueue) SchedulingCycle() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.schedulingCycle
}

// Done marks a popped pod as finished with (bound, or requeued).
func (q *PriorityQueue) Done(pod *corev1.Pod) {
	q.mu.Lock()
	delete(q.inFlight, podKey(pod))
	q.mu.Unlock()
}

func podKey(pod *corev1.Pod) string {
	return pod.GetMetadata().GetNamespace() + "/" + pod.GetMetadata().GetName()
}

// AddUnschedulableIfNotPresent requeues a pod whose attempt in cycle
// podSchedulingCycle failed: to backoffQ if the failure was an error or a
// move request came in meanwhile, otherwise to the unschedulable pool.
func (q *PriorityQueue) AddUnschedulableIfNotPresent(pi *framework.QueuedPodInfo, podSchedulingCycle int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := pi.Key()
	delete(q.inFlight, key)
	if _, ok := q.unschedulable[key]; ok {
		return ErrAlreadyQueued
	}
	if _, ok := q.activeQ.get(key); ok {
		return ErrAlreadyQueued
	}
	if _, ok := q.backoffQ.get(key); ok {
		return ErrAlreadyQueued
	}
	pi.Timestamp = q.clock.Now()
	q.nominator.AddNominatedPod(pi.PodInfo, nil)
	if len(pi.UnschedulablePlugins) == 0 && len(pi.PendingPlugins) == 0 || q.moveRequestCycle >= podSchedulingCycle {
		q.addToBackoff(pi)
		return nil
	}
	q.unschedulable[key] = pi
	return nil
}

func (q *PriorityQueue) addToBackoff(pi *framework.QueuedPodInfo) {
	q.backoffQ.addOrUpdate(pi)
	select {
	case q.backoffWake <- struct{}{}:
	default:
	}
}

// backoffDuration is initial × 2^(attempts−1), capped at the maximum.
func (q *PriorityQueue) backoffDuration(pi *framework.QueuedPodInfo) time.Duration {
	d := q.initialBackoff
	for i := 1; i < pi.Attempts; i++ {
		if d > q.maxBackoff-d {
			return q.maxBackoff
		}
		d += d
	}
	return min(d, q.maxBackoff)
}

func (q *PriorityQueue) backoffTime(pi *framework.QueuedPodInfo) time.Time {
	return pi.Timestamp.Add(q.backoffDuration(pi))
}

func (q *PriorityQueue) isBackingOff(pi *framework.QueuedPodInfo) bool {
	return pi.Attempts > 0 && q.backoffTime(pi).After(q.clock.Now())
}

// flushBackoffCompleted moves the pods whose backoff has expired to activeQ.
func (q *PriorityQueue) flushBackoffCompleted() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	for {
		head := q.backoffQ.peek()
		if head == nil || q.backoffTime(head).After(now) {
			return
		}
		q.backoffQ.pop()
		q.moveToActiveQ(head, "BackoffComplete")
	}
}

// flushUnschedulableLeftover moves pods that stayed in the pool too long.
func (q *PriorityQueue) flushUnschedulableLeftover() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	var move []*framework.QueuedPodInfo
	for _, pi := range q.unschedulable {
		if !pi.Gated && now.Sub(pi.Timestamp) > q.maxInUnschedulable {
			move = append(move, pi)
		}
	}
	q.movePodsLocked(move, framework.EventUnschedulableTimeout)
}

// MoveAllToActiveOrBackoffQueue moves the pool's pods that event (with the
// changed objects) may help, as the plugins that rejected them say.
// preCheck, when not nil, must also accept the pod.
func (q *PriorityQueue) MoveAllToActiveOrBackoffQueue(event framework.ClusterEvent, oldObj, newObj object.Object, preCheck func(*corev1.Pod) bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var move []*framework.QueuedPodInfo
	for _, pi := range q.unschedulable {
		if pi.Gated {
			continue
		}
		if preCheck != nil && !preCheck(pi.Pod) {
			continue
		}
		if q.worthRequeuing(pi, event, oldObj, newObj) {
			move = append(move, pi)
		}
	}
	q.movePodsLocked(move, event)
	q.moveRequestCycle = q.schedulingCycle
}

func (q *PriorityQueue) movePodsLocked(pods []*framework.QueuedPodInfo, event framework.ClusterEvent) {
	for _, pi := range pods {
		delete(q.unschedulable, pi.Key())
		if q.isBackingOff(pi) {
			q.addToBackoff(pi)
			continue
		}
		q.moveToActiveQ(pi, event.Label)
	}
}

// worthRequeuing asks the plugins that rejected pi whether event may help.
func (q *PriorityQueue) worthRequeuing(pi *framework.QueuedPodInfo, event framework.ClusterEvent, oldObj, newObj object.Object) bool {
	if len(pi.UnschedulablePlugins) == 0 && len(pi.PendingPlugins) == 0 {
		return true
	}
	if event.Resource == framework.WildCard && event.ActionType == framework.All {
		return true
	}
	prof, ok := q.profiles[ProfileOf(pi.Pod)]
	if !ok {
		return true
	}
	registered := prof.EventsToRegister()
	for _, set := range []map[string]bool{pi.UnschedulablePlugins, pi.PendingPlugins} {
		for plugin := range set {
			for _, ev := range registered[plugin] {
				if !ev.Event.Match(event) {
					continue
				}
				if ev.QueueingHintFn == nil {
					return true
				}
				h, err := ev.QueueingHintFn(pi.Pod, oldObj, newObj)
				if err != nil {
					q.log.Error("queueing hint failed; requeuing the pod", "pod", pi.Key(), "plugin", plugin, "event", event.Label, "err", err)
					return true
				}
				if h == framework.Queue {
					return true
				}
			}
		}
	}
	return false
}

// Update replaces a pending pod with its new version; an update that may
// make an unschedulable pod fit (anything but its status) requeues it.
func (q *PriorityQueue) Update(oldPod, newPod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := podKey(newPod)
	// PodInfos are replaced, never changed in place: the nominator shares them
	// with scheduling cycles that read them concurrently.
	if pi, ok := q.activeQ.get(key); ok {
		pi.PodInfo = framework.NewPodInfo(newPod)
		q.activeQ.addOrUpdate(pi)
		q.nominator.updateNominatedPod(oldPod, pi.PodInfo)
		return
	}
	if pi, ok := q.backoffQ.get(key); ok {
		pi.PodInfo = framework.NewPodInfo(newPod)
		q.backoffQ.addOrUpdate(pi)
		q.nominator.updateNominatedPod(oldPod, pi.PodInfo)
		return
	}
	if pi, ok := q.unschedulable[key]; ok {
		pi.PodInfo = framework.NewPodInfo(newPod)
		q.nominator.updateNominatedPod(oldPod, pi.PodInfo)
		if isPodUpdated(oldPod, newPod) {
			if pi.Gated || !q.isBackingOff(pi) {
				q.moveToActiveQ(pi, "PodUpdate")
			} else {
				delete(q.unschedulable, key)
				q.addToBackoff(pi)
			}
		}
		return
	}
	if q.inFlight[key] {
		return // being scheduled: the attempt's outcome decides
	}
	pi := q.newQueuedPodInfo(newPod)
	q.moveToActiveQ(pi, "PodUpdate")
	q.nominator.AddNominatedPod(pi.PodInfo, nil)
}

// isPodUpdated reports whether anything but status and bookkeeping changed.
func isPodUpdated(oldPod, newPod *corev1.Pod) bool {
	if !proto.Equal(oldPod.GetSpec(), newPod.GetSpec()) {
		return true
	}
	if !maps.Equal(oldPod.GetMetadata().GetLabels(), newPod.GetMetadata().GetLabels()) {
		return true
	}
	oa, na := oldPod.GetMetadata().GetAnnotations(), newPod.GetMetadata().GetAnnotations()
	for k, v := range oa {
		if k != telemetry.TraceparentAnnotation && na[k] != v {
			return true
		}
	}
	for k := range na {
		if _, ok := oa[k]; !ok && k != telemetry.TraceparentAnnotation {
			return true
		}
	}
	return false
}

// Delete removes a pod from every queue.
func (q *PriorityQueue) Delete(pod *corev1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := podKey(pod)
	q.activeQ.delete(key)
	q.backoffQ.delete(key)
	delete(q.unschedulable, key)
	q.nominator.DeleteNominatedPodIfExists(pod)
}

// Lengths are the numbers of pods in activeQ, backoffQ, the unschedulable pool, and gated.
type Lengths struct {
	Active, Backoff, Unschedulable, Gated int
}

// Len reports the queues' lengths.
func (q *PriorityQueue) Len() Lengths {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := Lengths{Active: q.activeQ.Len(), Backoff: q.backoffQ.Len()}
	for _, pi := range q.unschedulable {
		if pi.Gated {
			l.Gated++
		} else {
			l.Unschedulable++
		}
	}
	return l
}

// Where says which queue holds the pod ("active", "backoff", "unschedulable", "gated" or "").
func (q *PriorityQueue) Where(namespace, name string) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	key := namespace + "/" + name
	if _, ok := q.activeQ.get(key); ok {
		return "active"
	}
	if _, ok := q.backoffQ.get(key); ok {
		return "backoff"
	}
	if pi, ok := q.unschedulable[key]; ok {
		if pi.Gated {
			return "gated"
		}
		return "unschedulable"
	}
	return ""
}
