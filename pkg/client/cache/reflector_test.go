package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client/cache/cachetest"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

var (
	quiet = slog.New(slog.DiscardHandler)
	epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
)

// runReflector runs a reflector from src into store until the test ends. It
// never backs off unless opts say otherwise.
func runReflector(t *testing.T, src *cachetest.Source, store ReflectorStore, opts ...ReflectorOption) *Reflector {
	t.Helper()
	return runReflectorFrom(t, src, store, opts...)
}

func runReflectorFrom(t *testing.T, lw ListerWatcher, store ReflectorStore, opts ...ReflectorOption) *Reflector {
	t.Helper()
	base := []ReflectorOption{WithName("pods"), WithExpectedType(&corev1.Pod{}), WithBackoff(Backoff{}), WithLogger(quiet)}
	r := NewReflector(lw, store, append(base, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return r
}

// state is key → resourceVersion.
func state(objs []object.Object) map[string]string {
	m := make(map[string]string, len(objs))
	for _, o := range objs {
		m[object.Key(o)] = o.GetMetadata().GetResourceVersion()
	}
	return m
}

func converged(store interface{ List() []object.Object }, src *cachetest.Source) func() bool {
	return func() bool { return maps.Equal(state(store.List()), state(src.Objects())) }
}

func mustCreate(t *testing.T, src *cachetest.Source, obj object.Object) object.Object {
	t.Helper()
	out, err := src.Create(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustUpdate(t *testing.T, src *cachetest.Source, obj object.Object) object.Object {
	t.Helper()
	out, err := src.Update(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stepUntil moves a fake clock on by a second whenever something waits on
// it, until cond holds.
func stepUntil(t *testing.T, c *clock.Fake, what string, cond func() bool) {
	t.Helper()
	eventually(t, what, func() bool {
		if cond() {
			return true
		}
		if c.Waiters() > 0 {
			c.Step(time.Second)
		}
		return false
	})
}

func TestReflectorResumesADroppedWatchFromTheLastResourceVersionWithoutRelisting(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	mustCreate(t, src, makePod("default", "a").Obj())
	mustCreate(t, src, makePod("default", "b").Obj())
	listRV := src.ResourceVersion()
	fc := clock.NewFake(epoch)
	store := NewStore(nil)
	r := runReflector(t, src, store, WithClock(fc), WithBackoff(Backoff{Initial: time.Second}))
	eventually(t, "the initial list", converged(store, src))

	mustUpdate(t, src, makePod("default", "a").Label("v", "2").Obj())
	lastSeen := src.ResourceVersion()
	eventually(t, "the update", func() bool { return r.LastSyncResourceVersion() == lastSeen })

	// The connection breaks and the first reconnect fails: the reflector
	// backs off, and the resource changes meanwhile.
	src.FailNextWatch(apierrors.NewServiceUnavailable("apiserver restarting"))
	src.DropWatches()
	eventually(t, "the reflector to back off", func() bool { return fc.Waiters() == 1 })
	mustCreate(t, src, makePod("default", "c").Obj())
	mustUpdate(t, src, makePod("default", "a").Label("v", "3").Obj())
	if err := src.Delete("default", "b"); err != nil {
		t.Fatal(err)
	}
	stepUntil(t, fc, "the changes made while disconnected", converged(store, src))

	if n := src.ListCalls(); n != 1 {
		t.Errorf("listed %d times, want 1: a dropped watch must resume, not relist", n)
	}
	if got, want := src.WatchCalls(), []string{listRV, lastSeen, lastSeen}; !slices.Equal(got, want) {
		t.Errorf("watched from %v, want %v", got, want)
	}
}

func TestReflectorRelistsWhenTheWatchedRevisionWasCompacted(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	mustCreate(t, src, makePod("default", "a").Obj())
	mustCreate(t, src, makePod("default", "b").Obj())
	fc := clock.NewFake(epoch)
	store := NewStore(nil)
	r := runReflector(t, src, store, WithClock(fc), WithBackoff(Backoff{Initial: time.Second}))
	eventually(t, "the initial list", converged(store, src))
	stale := r.LastSyncResourceVersion()

	src.FailNextWatch(apierrors.NewServiceUnavailable("apiserver restarting"))
	src.DropWatches()
	eventually(t, "the reflector to back off", func() bool { return fc.Waiters() == 1 })
	// While it is away, b is deleted and etcd compacts past its last revision.
	if err := src.Delete("default", "b"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, src, makePod("default", "c").Obj())
	src.Compact()
	stepUntil(t, fc, "the relist", converged(store, src))

	if n := src.ListCalls(); n != 2 {
		t.Errorf("listed %d times, want 2: a 410 on watch must relist", n)
	}
	calls := src.WatchCalls()
	if len(calls) < 3 || calls[2] != stale || calls[len(calls)-1] != src.ResourceVersion() {
		t.Errorf("watched from %v: want a watch from the stale %s (410), then from the relist", calls, stale)
	}
}

func TestReflectorRelistsOnAnErrorEventWith410(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	mustCreate(t, src, makePod("default", "a").Obj())
	store := NewStore(nil)
	runReflector(t, src, store)
	eventually(t, "the initial list", converged(store, src))

	src.SendError(apierrors.NewResourceExpired("too old resource version: 2 (5)"))
	eventually(t, "the relist", func() bool { return src.ListCalls() == 2 })
	mustCreate(t, src, makePod("default", "b").Obj())
	eventually(t, "the watch after the relist", converged(store, src))
}

func TestReflectorResumesAfterAnErrorEventThatIsNot410(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	mustCreate(t, src, makePod("default", "a").Obj())
	store := NewStore(nil)
	r := runReflector(t, src, store)
	eventually(t, "the initial list", converged(store, src))
	rv := r.LastSyncResourceVersion()

	src.SendError(apierrors.NewInternalError(errors.New("etcd leader changed")))
	eventually(t, "the resumed watch", func() bool { return len(src.WatchCalls()) == 2 })
	mustCreate(t, src, makePod("default", "b").Obj())
	eventually(t, "the event on the resumed watch", converged(store, src))
	if n := src.ListCalls(); n != 1 {
		t.Errorf("listed %d times, want 1", n)
	}
	if got := src.WatchCalls()[1]; got != rv {
		t.Errorf("resumed from %s, want %s", got, rv)
	}
}

func TestReflectorBookmarksAdvanceTheResumeResourceVersion(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	mustCreate(t, src, makePod("default", "a").Obj())
	store := NewStore(nil)
	r := runReflector(t, src, store)
	eventually(t, "the initial list", converged(store, src))
	eventually(t, "the watch", func() bool { return src.OpenWatches() == 1 })

	src.AdvanceRevision(40) // writes to other resources
	// The Source sends bookmarks only to watches that asked for them.
	bookmark := src.Bookmark()
	eventually(t, "the bookmark", func() bool { return r.LastSyncResourceVersion() == bookmark })

	src.DropWatches()
	eventually(t, "the resumed watch", func() bool { return len(src.WatchCalls()) == 2 })
	if got := src.WatchCalls()[1]; got != bookmark {
		t.Errorf("resumed from %s, want the bookmark's %s", got, bookmark)
	}
	if n := src.ListCalls(); n != 1 {
		t.Errorf("listed %d times, want 1", n)
	}
	if !converged(store, src)() {
		t.Error("a bookmark changed the store")
	}
}

func TestReflectorBacksOffExponentiallyAfterFailedLists(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	mustCreate(t, src, makePod("default", "a").Obj())
	for range 3 {
		src.FailNextList(apierrors.NewServiceUnavailable("etcd has no quorum"))
	}
	fc := clock.NewFake(epoch)
	store := NewStore(nil)
	runReflector(t, src, store, WithClock(fc), WithBackoff(Backoff{Initial: time.Second, Factor: 2, Max: 3 * time.Second}))

	for attempt, wait := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
		eventually(t, "the reflector to back off", func() bool { return fc.Waiters() == 1 })
		fc.Step(wait - time.Millisecond)
		if n := src.ListCalls(); n != attempt+1 {
			t.Fatalf("attempt %d: listed %d times before the %v backoff ended", attempt+2, n, wait)
		}
		fc.Step(time.Millisecond)
		eventually(t, "the next list", func() bool { return src.ListCalls() == attempt+2 })
	}
	eventually(t, "the list that succeeds", converged(store, src))
}

func TestBackoffDoublesWithJitterAndResetsAfterHealth(t *testing.T) {
	b := backoffState{Backoff: Backoff{
		Initial: 800 * time.Millisecond, Max: 30 * time.Second, Factor: 2, Jitter: 1,
		ResetAfter: 2 * time.Minute, Rand: func() float64 { return 0.5 },
	}}
	now := epoch
	tests := []struct {
		after time.Duration // since the previous failure
		want  time.Duration
	}{
		{0, 1200 * time.Millisecond}, // 800ms + 50% jitter
		{time.Second, 2400 * time.Millisecond},
		{time.Second, 4800 * time.Millisecond},
		{time.Second, 9600 * time.Millisecond},
		{time.Second, 19200 * time.Millisecond},
		{time.Second, 38400 * time.Millisecond}, // 25.6s + jitter
		{time.Second, 45 * time.Second},         // capped at 30s, then jitter
		{time.Second, 45 * time.Second},
		{3 * time.Minute, 1200 * time.Millisecond}, // healthy for a while: start over
	}
	for i, tt := range tests {
		now = now.Add(tt.after)
		if got := b.next(now); got != tt.want {
			t.Errorf("failure %d: wait %v, want %v", i+1, got, tt.want)
		}
	}
	if got := (&backoffState{}).next(now); got != 0 {
		t.Errorf("the zero Backoff waits %v", got)
	}
}

func TestReflectorListsInPages(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	for i := range 5 {
		mustCreate(t, src, makePod("default", fmt.Sprintf("p%d", i)).Obj())
	}
	store := NewStore(nil)
	runReflector(t, src, store, WithPageSize(2))
	eventually(t, "the paged list", converged(store, src))
	if n := src.ListCalls(); n != 1 {
		t.Errorf("a paged list counted as %d lists", n)
	}
}

// compactingPager compacts the Source after serving the first page of a
// list, so that the continue token expires.
type compactingPager struct {
	*cachetest.Source
	once sync.Once
}

func (c *compactingPager) ListPage(ctx context.Context, opts *metav1.ListRequest) ([]object.Object, string, string, error) {
	items, rv, next, err := c.Source.ListPage(ctx, opts)
	c.once.Do(func() {
		c.Source.Create(makePod("default", "late").Obj())
		c.Source.Compact()
	})
	return items, rv, next, err
}

func TestReflectorListsInOnePieceWhenAPagedListExpires(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	for i := range 5 {
		mustCreate(t, src, makePod("default", fmt.Sprintf("p%d", i)).Obj())
	}
	store := NewStore(nil)
	runReflectorFrom(t, &compactingPager{Source: src}, store, WithPageSize(2))
	eventually(t, "the fallback list", converged(store, src))
	if n := src.ListCalls(); n != 2 {
		t.Errorf("listed %d times, want the expired paged list and one whole list", n)
	}
}

func TestReflectorSendsItsOptionsAndKeepsTheTemplate(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	store := NewStore(nil)
	rec := &recordingLW{ListerWatcher: src}
	template := &metav1.ListRequest{Namespace: "default"}
	r := runReflectorFrom(t, rec, store, WithListOptions(template), WithWatchTimeout(time.Minute))
	eventually(t, "the watch", func() bool { return rec.watches() > 0 })
	list, w := rec.first()
	if list.GetNamespace() != "default" || list.GetResourceVersion() != "" || list.GetWatch() {
		t.Errorf("list request %v", list)
	}
	if w.GetNamespace() != "default" || !w.GetAllowWatchBookmarks() || w.GetResourceVersion() != r.LastSyncResourceVersion() {
		t.Errorf("watch request %v", w)
	}
	if ts := w.GetTimeoutSeconds(); ts < 60 || ts > 120 {
		t.Errorf("watch timeout %ds, want between 1 and 2 minutes", ts)
	}
	if template.GetResourceVersion() != "" || template.GetAllowWatchBookmarks() {
		t.Error("the reflector changed the caller's template")
	}
}

type recordingLW struct {
	ListerWatcher
	mu             sync.Mutex
	lists, watchRQ []*metav1.ListRequest
}

func (r *recordingLW) List(ctx context.Context, opts *metav1.ListRequest) ([]object.Object, string, error) {
	r.mu.Lock()
	r.lists = append(r.lists, opts)
	r.mu.Unlock()
	return r.ListerWatcher.List(ctx, opts)
}

func (r *recordingLW) Watch(ctx context.Context, opts *metav1.ListRequest) (watch.Interface, error) {
	r.mu.Lock()
	r.watchRQ = append(r.watchRQ, opts)
	r.mu.Unlock()
	return r.ListerWatcher.Watch(ctx, opts)
}

func (r *recordingLW) watches() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.watchRQ)
}

func (r *recordingLW) first() (*metav1.ListRequest, *metav1.ListRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lists[0], r.watchRQ[0]
}

// faults are the things that go wrong between a client and the apiserver,
// applied at random by the convergence tests.
func injectFault(rng *rand.Rand, src *cachetest.Source) {
	switch rng.IntN(7) {
	case 0:
		src.DropWatches()
	case 1:
		src.Compact()
		src.DropWatches()
	case 2:
		src.SendError(apierrors.NewResourceExpired("too old resource version"))
	case 3:
		src.SendError(apierrors.NewInternalError(errors.New("etcd leader changed")))
	case 4:
		src.FailNextWatch(apierrors.NewServiceUnavailable("apiserver restarting"))
		src.DropWatches()
	case 5:
		src.AdvanceRevision(int64(1 + rng.IntN(5)))
		src.Bookmark()
	case 6:
		src.FailNextList(apierrors.NewServiceUnavailable("etcd has no quorum"))
		src.Compact()
		src.DropWatches()
	}
}

// mutate makes one random write to src.
func mutate(t *testing.T, rng *rand.Rand, src *cachetest.Source, names int, step int) {
	t.Helper()
	name := fmt.Sprintf("pod-%d", rng.IntN(names))
	exists := false
	for _, o := range src.Objects() {
		if o.GetMetadata().GetName() == name {
			exists = true
		}
	}
	switch {
	case !exists:
		mustCreate(t, src, makePod("default", name).Label("step", fmt.Sprint(step)).Obj())
	case rng.IntN(3) == 0:
		if err := src.Delete("default", name); err != nil {
			t.Fatal(err)
		}
	default:
		mustUpdate(t, src, makePod("default", name).Label("step", fmt.Sprint(step)).Obj())
	}
}

// faultCoverage fails the test if the random faults never forced both a
// relist and a resumed watch: the test would have become trivial.
type faultCoverage struct{ relists, resumes int }

func (c *faultCoverage) add(src *cachetest.Source) {
	c.relists += src.ListCalls() - 1
	c.resumes += len(src.WatchCalls()) - src.ListCalls()
}

func (c *faultCoverage) check(t *testing.T) {
	t.Helper()
	t.Logf("faults forced %d relists and %d resumed watches", c.relists, c.resumes)
	if c.relists == 0 || c.resumes == 0 {
		t.Errorf("faults forced %d relists and %d resumed watches; want some of each", c.relists, c.resumes)
	}
}

func TestReflectorConvergesAfterRandomWritesAndFaults(t *testing.T) {
	var coverage faultCoverage
	defer coverage.check(t)
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0))
			src := cachetest.NewSource(&corev1.Pod{})
			store := NewStore(nil)
			runReflector(t, src, store)
			for step := range 300 {
				if rng.IntN(8) == 0 {
					injectFault(rng, src)
				} else {
					mutate(t, rng, src, 15, step)
				}
				if rng.IntN(20) == 0 {
					time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond) // let the reflector catch up, sometimes
				}
			}
			eventually(t, "the store to converge on "+src.String(), converged(store, src))
			coverage.add(src)
		})
	}
}
