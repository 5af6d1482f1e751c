package scheduler

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	pcache "podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/record"
	"podline.dev/pkg/clock"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/cache"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/internal/framework/runtime"
	"podline.dev/services/scheduler/internal/metrics"
	"podline.dev/services/scheduler/internal/profile"
	"podline.dev/services/scheduler/internal/queue"
	"podline.dev/services/scheduler/plugins"
)

// TracerName names the scheduler's spans.
const TracerName = "podline.dev/services/scheduler"

// Scheduler schedules pods with one framework per profile.
type Scheduler struct {
	conn     grpc.ClientConnInterface
	cfg      *profile.Config
	Cache    *cache.Cache
	Queue    *queue.PriorityQueue
	Profiles map[string]*runtime.Framework
	snapshot *cache.Snapshot
	metrics  *metrics.Metrics
	clock    clock.Clock
	log      *slog.Logger
	pods     *client.Client[*corev1.Pod]

	podInformer  pcache.SharedIndexInformer
	nodeInformer pcache.SharedIndexInformer
	podLister    pcache.Lister[*corev1.Pod]

	recorders map[string]*record.Recorder
	// nextStartNodeIndex rotates where filtering starts, so every node gets looked at.
	nextStartNodeIndex int
	rand               *rand.Rand
	bindings           sync.WaitGroup
	// topN is how many nodes the Filter and Score spans describe.
	topN int
	// scratch holds the filter's buffers between (serial) cycles.
	scratch struct {
		feasible []*framework.NodeInfo
		statuses []*framework.Status
	}
}

type options struct {
	clock              clock.Clock
	log                *slog.Logger
	metrics            *metrics.Metrics
	registry           runtime.Registry
	parallelism        int
	maxInUnschedulable time.Duration
	initialBackoff     time.Duration
	maxBackoff         time.Duration
	host               string
	seed               uint64
	recorder           func(component string) (record.EventRecorder, *record.Recorder)
}

// Option configures a Scheduler.
type Option func(*options)

// WithClock sets the clock of the queue and the latency metrics.
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithMetrics records metrics on m.
func WithMetrics(m *metrics.Metrics) Option { return func(o *options) { o.metrics = m } }

// WithRegistry adds (or replaces) plugins of the in-tree registry (tests).
func WithRegistry(r runtime.Registry) Option { return func(o *options) { o.registry = r } }

// WithParallelism sets the goroutines Filter and Score use (0: GOMAXPROCS).
func WithParallelism(n int) Option { return func(o *options) { o.parallelism = n } }

// WithPodMaxInUnschedulablePodsDuration shortens the 5-minute flush (tests).
func WithPodMaxInUnschedulablePodsDuration(d time.Duration) Option {
	return func(o *options) { o.maxInUnschedulable = d }
}

// WithBackoff overrides the configuration's pod backoff (tests).
func WithBackoff(initial, maxBackoff time.Duration) Option {
	return func(o *options) { o.initialBackoff, o.maxBackoff = initial, maxBackoff }
}

// WithHost sets the host named in events (default the hostname).
func WithHost(h string) Option { return func(o *options) { o.host = h } }

// WithSeed fixes the random choices (ties between nodes, preemption offsets) (benchmarks).
func WithSeed(s uint64) Option { return func(o *options) { o.seed = s } }

// WithoutEvents records no events (the benchmark's cycle-only run).
func WithoutEvents() Option {
	return func(o *options) {
		o.recorder = func(string) (record.EventRecorder, *record.Recorder) { return record.NewFakeRecorder(0), nil }
	}
}

// New builds a scheduler for the profiles of cfg over conn. Nothing runs
// until Start and Run.
func New(ctx context.Context, conn grpc.ClientConnInterface, cfg *profile.Config, opts ...Option) (*Scheduler, error) {
	o := options{clock: clock.Real{}, log: slog.Default(), seed: uint64(time.Now().UnixNano())}
	for _, opt := range opts {
		opt(&o)
	}
	if o.host == "" {
		o.host, _ = os.Hostname()
	}
	if o.parallelism == 0 && cfg.Parallelism != nil {
		o.parallelism = int(*cfg.Parallelism)
	}
	if o.recorder == nil {
		o.recorder = func(component string) (record.EventRecorder, *record.Recorder) {
			r := record.NewRecorder(conn, component, o.host, record.WithLogger(o.log))
			return r, r
		}
	}
	registry := plugins.NewInTreeRegistry()
	for name, f := range o.registry {
		registry[name] = f
	}
	s := &Scheduler{
		conn:      conn,
		cfg:       cfg,
		Cache:     cache.New(o.log),
		Profiles:  map[string]*runtime.Framework{},
		snapshot:  cache.NewEmptySnapshot(),
		metrics:   o.metrics,
		clock:     o.clock,
		log:       o.log,
		recorders: map[string]*record.Recorder{},
		rand:      rand.New(rand.NewPCG(o.seed, o.seed^0x9e3779b97f4a7c15)),
		topN:      10,
	}
	if conn != nil {
		s.pods = client.Pods(conn)
	}
	var qprofiles []queue.Profile
	for i := range cfg.Profiles {
		p := &cfg.Profiles[i]
		rec, closer := o.recorder(p.SchedulerName)
		if closer != nil {
			s.recorders[p.SchedulerName] = closer
		}
		fw, err := runtime.NewFramework(ctx, registry, p,
			runtime.WithConn(conn),
			runtime.WithEventRecorder(rec),
			runtime.WithSnapshotSharedLister(s.snapshot),
			runtime.WithParallelism(o.parallelism),
			runtime.WithLogger(o.log))
		if err != nil {
			return nil, fmt.Errorf("profile %q: %w", p.SchedulerName, err)
		}
		s.Profiles[p.SchedulerName] = fw
		qprofiles = append(qprofiles, fw)
	}
	initial := time.Duration(*cfg.PodInitialBackoffSeconds) * time.Second
	maxBackoff := time.Duration(*cfg.PodMaxBackoffSeconds) * time.Second
	if o.initialBackoff > 0 {
		initial, maxBackoff = o.initialBackoff, o.maxBackoff
	}
	qopts := []queue.Option{queue.WithClock(o.clock), queue.WithLogger(o.log),
		queue.WithPodInitialBackoff(initial), queue.WithPodMaxBackoff(maxBackoff)}
	if o.maxInUnschedulable > 0 {
		qopts = append(qopts, queue.WithPodMaxInUnschedulablePodsDuration(o.maxInUnschedulable))
	}
	// Every profile must sort the queue the same way; the first one's order is used.
	s.Queue = queue.New(s.Profiles[cfg.Profiles[0].SchedulerName].QueueSortFunc(), qprofiles, qopts...)
	for _, fw := range s.Profiles {
		fw.SetPodNominator(s.Queue)
	}
	if s.metrics != nil {
		s.metrics.RegisterPendingPods(func() (int, int, int, int) {
			l := s.Queue.Len()
			return l.Active, l.Backoff, l.Unschedulable, l.Gated
		})
	}
	return s, nil
}

// Start starts the pod and node informers; Run needs their caches synced.
func (s *Scheduler) Start(ctx context.Context) {
	podLW := &client.ListWatch[*corev1.Pod]{Client: s.pods, FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"}
	nodeLW := &client.ListWatch[*corev1.Node]{Client: client.Nodes(s.conn)}
	s.podInformer = pcache.NewSharedIndexInformer(podLW, &corev1.Pod{}, pcache.WithInformerLogger(s.log))
	s.nodeInformer = pcache.NewSharedIndexInformer(nodeLW, &corev1.Node{}, pcache.WithInformerLogger(s.log))
	s.podLister = pcache.NewLister[*corev1.Pod](s.podInformer.GetIndexer(), apierrors.GroupResource{Resource: "pods"})
	s.addEventHandlers()
	go s.podInformer.Run(ctx)
	go s.nodeInformer.Run(ctx)
}

// WaitForCacheSync waits for the informers.
func (s *Scheduler) WaitForCacheSync(ctx context.Context) bool {
	return pcache.WaitForCacheSync(ctx, s.podInformer.HasSynced, s.nodeInformer.HasSynced)
}

// Run schedules pods until ctx is done, then waits for bindings in flight.
func (s *Scheduler) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { s.Queue.Run(ctx) })
	for s.ScheduleOne(ctx) {
	}
	wg.Wait()
	s.bindings.Wait()
}

// Shutdown flushes the event recorders.
func (s *Scheduler) Shutdown() {
	for _, r := range s.recorders {
		r.Shutdown()
	}
}
