package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"

	"podline.dev/pkg/client/record"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/internal/profile"
)

// maxPermitTimeout bounds how long a Permit plugin may hold a pod.
const maxPermitTimeout = 15 * time.Minute

// Framework runs one profile's plugins. It is the Handle its plugins get.
type Framework struct {
	profileName string
	plugins     map[string]framework.Plugin

	preEnqueue []framework.PreEnqueuePlugin
	queueSort  framework.QueueSortPlugin
	preFilter  []framework.PreFilterPlugin
	filter     []framework.FilterPlugin
	postFilter []framework.PostFilterPlugin
	preScore   []framework.PreScorePlugin
	score      []framework.ScorePlugin
	reserve    []framework.ReservePlugin
	permit     []framework.PermitPlugin
	preBind    []framework.PreBindPlugin
	bind       []framework.BindPlugin
	postBind   []framework.PostBindPlugin
	weights    map[string]int64

	percentageOfNodesToScore *int32
	events                   map[string][]framework.ClusterEventWithHint

	snapshot     framework.SharedLister
	conn         grpc.ClientConnInterface
	recorder     record.EventRecorder
	parallelizer framework.Parallelizer
	nominator    framework.PodNominator
	waiting      *waitingPods
	log          *slog.Logger

	// scoreScratch holds RunScorePlugins' buffers between cycles.
	scoreMu      sync.Mutex
	scoreScratch struct {
		plugins []framework.ScorePlugin
		raw     []framework.NodeScore
		lists   []framework.NodeScoreList
		out     []NodePluginScores
		flat    []PluginScore
	}
}

var (
	_ framework.Handle        = (*Framework)(nil)
	_ framework.PluginsRunner = (*Framework)(nil)
)

// Option configures a Framework.
type Option func(*Framework)

// WithSnapshotSharedLister sets the snapshot plugins read (the scheduler
// refreshes it in place each cycle).
func WithSnapshotSharedLister(s framework.SharedLister) Option {
	return func(f *Framework) { f.snapshot = s }
}

// WithConn sets the apiserver connection.
func WithConn(c grpc.ClientConnInterface) Option { return func(f *Framework) { f.conn = c } }

// WithEventRecorder sets the event recorder.
func WithEventRecorder(r record.EventRecorder) Option { return func(f *Framework) { f.recorder = r } }

// WithParallelism sets how many goroutines Filter and Score use (0: GOMAXPROCS).
func WithParallelism(n int) Option {
	return func(f *Framework) { f.parallelizer = framework.NewParallelizer(n) }
}

// WithPodNominator sets the nominator (the scheduling queue).
func WithPodNominator(n framework.PodNominator) Option { return func(f *Framework) { f.nominator = n } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(f *Framework) { f.log = l } }

// NewFramework builds the plugins of prof (a completed profile) from registry.
func NewFramework(ctx context.Context, registry Registry, prof *profile.Profile, opts ...Option) (*Framework, error) {
	f := &Framework{
		profileName:              prof.SchedulerName,
		plugins:                  map[string]framework.Plugin{},
		weights:                  map[string]int64{},
		percentageOfNodesToScore: prof.PercentageOfNodesToScore,
		events:                   map[string][]framework.ClusterEventWithHint{},
		parallelizer:             framework.NewParallelizer(0),
		recorder:                 &record.FakeRecorder{},
		nominator:                noNominator{},
		waiting:                  newWaitingPods(),
		log:                      slog.Default(),
	}
	for _, o := range opts {
		o(f)
	}
	pl := prof.Plugins
	if pl == nil {
		pl = &profile.Plugins{}
	}
	points := []struct {
		set profile.PluginSet
		add func(framework.Plugin) bool // false: the plugin does not implement the point
	}{
		{pl.PreEnqueue, addIf(&f.preEnqueue)},
		{pl.QueueSort, func(p framework.Plugin) bool {
			q, ok := p.(framework.QueueSortPlugin)
			if ok && f.queueSort == nil {
				f.queueSort = q
			}
			return ok
		}},
		{pl.PreFilter, addIf(&f.preFilter)},
		{pl.Filter, addIf(&f.filter)},
		{pl.PostFilter, addIf(&f.postFilter)},
		{pl.PreScore, addIf(&f.preScore)},
		{pl.Score, addIf(&f.score)},
		{pl.Reserve, addIf(&f.reserve)},
		{pl.Permit, addIf(&f.permit)},
		{pl.PreBind, addIf(&f.preBind)},
		{pl.Bind, addIf(&f.bind)},
		{pl.PostBind, addIf(&f.postBind)},
	}
	get := func(name string) (framework.Plugin, error) {
		if p, ok := f.plugins[name]; ok {
			return p, nil
		}
		factory, ok := registry[name]
		if !ok {
			return nil, fmt.Errorf("%w: profile %q: plugin %q does not exist", profile.ErrInvalid, prof.SchedulerName, name)
		}
		p, err := factory(ctx, prof.Args(name), f)
		if err != nil {
			return nil, fmt.Errorf("initializing plugin %q: %w", name, err)
		}
		f.plugins[name] = p
		return p, nil
	}
	for _, pt := range points {
		added := map[string]bool{}
		// Plugins named at the point come first, in order; then the
		// multiPoint ones that implement it and are not disabled there.
		for _, e := range pt.set.Enabled {
			p, err := get(e.Name)
			if err != nil {
				return nil, err
			}
			if !pt.add(p) {
				return nil, fmt.Errorf("%w: plugin %q does not extend the point it is enabled at", profile.ErrInvalid, e.Name)
			}
			added[e.Name] = true
			if e.Weight > 0 {
				f.weights[e.Name] = int64(e.Weight)
			}
		}
		for _, e := range pl.MultiPoint.Enabled {
			if added[e.Name] || profile.Disables(pt.set, e.Name) {
				continue
			}
			p, err := get(e.Name)
			if err != nil {
				return nil, err
			}
			if pt.add(p) {
				added[e.Name] = true
				if _, ok := f.weights[e.Name]; !ok && e.Weight > 0 {
					f.weights[e.Name] = int64(e.Weight)
				}
			}
		}
	}
	for _, s := range f.score {
		if f.weights[s.Name()] == 0 {
			f.weights[s.Name()] = 1
		}
	}
	if f.queueSort == nil {
		return nil, fmt.Errorf("%w: profile %q has no queue sort plugin", profile.ErrInvalid, prof.SchedulerName)
	}
	if len(f.bind) == 0 {
		return nil, fmt.Errorf("%w: profile %q has no bind plugin", profile.ErrInvalid, prof.SchedulerName)
	}
	for name, p := range f.plugins {
		if ext, ok := p.(framework.EnqueueExtensions); ok {
			evs, err := ext.EventsToRegister(ctx)
			if err != nil {
				return nil, fmt.Errorf("plugin %q events: %w", name, err)
			}
			f.events[name] = evs
		}
	}
	return f, nil
}

func addIf[T framework.Plugin](list *[]T) func(framework.Plugin) bool {
	return func(p framework.Plugin) bool {
		t, ok := p.(T)
		if ok && !slices.ContainsFunc(*list, func(x T) bool { return x.Name() == p.Name() }) {
			*list = append(*list, t)
		}
		return ok
	}
}

// SetPodNominator sets the nominator after construction (the queue is built from the frameworks).
func (f *Framework) SetPodNominator(n framework.PodNominator) { f.nominator = n }

// SetSnapshotSharedLister sets the snapshot after construction.
func (f *Framework) SetSnapshotSharedLister(s framework.SharedLister) { f.snapshot = s }

// ProfileName is the schedulerName the profile serves.
func (f *Framework) ProfileName() string { return f.profileName }

// PercentageOfNodesToScore is the profile's setting (nil: the global one).
func (f *Framework) PercentageOfNodesToScore() *int32 { return f.percentageOfNodesToScore }

// QueueSortFunc is the profile's queue order.
func (f *Framework) QueueSortFunc() func(a, b *framework.QueuedPodInfo) bool { return f.queueSort.Less }

// PreEnqueuePlugins are the profile's gates.
func (f *Framework) PreEnqueuePlugins() []framework.PreEnqueuePlugin { return f.preEnqueue }

// EventsToRegister are the events each plugin registered, by plugin.
func (f *Framework) EventsToRegister() map[string][]framework.ClusterEventWithHint { return f.events }

// HasFilterPlugins, HasScorePlugins and HasPostFilterPlugins report what the profile has.
func (f *Framework) HasFilterPlugins() bool     { return len(f.filter) > 0 }
func (f *Framework) HasScorePlugins() bool      { return len(f.score) > 0 }
func (f *Framework) HasPostFilterPlugins() bool { return len(f.postFilter) > 0 }

// ListPlugins names the plugins at each extension point (logs, tests).
func (f *Framework) ListPlugins() map[string][]string {
	names := func(n int, at func(int) framework.Plugin) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = at(i).Name()
		}
		return out
	}
	m := map[string][]string{
		"PreEnqueue": names(len(f.preEnqueue), func(i int) framework.Plugin { return f.preEnqueue[i] }),
		"QueueSort":  {f.queueSort.Name()},
		"PreFilter":  names(len(f.preFilter), func(i int) framework.Plugin { return f.preFilter[i] }),
		"Filter":     names(len(f.filter), func(i int) framework.Plugin { return f.filter[i] }),
		"PostFilter": names(len(f.postFilter), func(i int) framework.Plugin { return f.postFilter[i] }),
		"PreScore":   names(len(f.preScore), func(i int) framework.Plugin { return f.preScore[i] }),
		"Reserve":    names(len(f.reserve), func(i int) framework.Plugin { return f.reserve[i] }),
		"Permit":     names(len(f.permit), func(i int) framework.Plugin { return f.permit[i] }),
		"PreBind":    names(len(f.preBind), func(i int) framework.Plugin { return f.preBind[i] }),
		"Bind":       names(len(f.bind), func(i int) framework.Plugin { return f.bind[i] }),
		"PostBind":   names(len(f.postBind), func(i int) framework.Plugin { return f.postBind[i] }),
	}
	for _, s := range f.score {
		m["Score"] = append(m["Score"], fmt.Sprintf("%s(%d)", s.Name(), f.weights[s.Name()]))
	}
	return m
}

// Handle.

func (f *Framework) SnapshotSharedLister() framework.SharedLister { return f.snapshot }
func (f *Framework) Conn() grpc.ClientConnInterface               { return f.conn }
func (f *Framework) EventRecorder() record.EventRecorder          { return f.recorder }
func (f *Framework) Parallelizer() framework.Parallelizer         { return f.parallelizer }

func (f *Framework) AddNominatedPod(pi *framework.PodInfo, info *framework.NominatingInfo) {
	f.nominator.AddNominatedPod(pi, info)
}
func (f *Framework) DeleteNominatedPodIfExists(pod *corev1.Pod) {
	f.nominator.DeleteNominatedPodIfExists(pod)
}
func (f *Framework) NominatedPodsForNode(nodeName string) []*framework.PodInfo {
	return f.nominator.NominatedPodsForNode(nodeName)
}

func (f *Framework) GetWaitingPod(uid string) framework.WaitingPod {
	if wp := f.waiting.get(uid); wp != nil {
		return wp
	}
	return nil
}

func (f *Framework) RejectWaitingPod(uid string) bool {
	if wp := f.waiting.get(uid); wp != nil {
		wp.Reject("", "removed")
		return true
	}
	return false
}

func (f *Framework) IterateOverWaitingPods(fn func(framework.WaitingPod)) { f.waiting.iterate(fn) }

type noNominator struct{}

func (noNominator) AddNominatedPod(*framework.PodInfo, *framework.NominatingInfo) {}
func (noNominator) DeleteNominatedPodIfExists(*corev1.Pod)                        {}
func (noNominator) NominatedPodsForNode(string) []*framework.PodInfo              { return nil }
