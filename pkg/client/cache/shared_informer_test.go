package cache

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client/cache/cachetest"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
)

// recorder is a handler that writes down what it is told.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) record(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
}

func (r *recorder) handler() ResourceEventHandlerFuncs {
	return ResourceEventHandlerFuncs{
		AddFunc: func(obj object.Object) { r.record("add %s", object.Key(obj)) },
		UpdateFunc: func(old, new object.Object) {
			r.record("update %s %s->%s", object.Key(new), old.GetMetadata().GetResourceVersion(), new.GetMetadata().GetResourceVersion())
		},
		DeleteFunc: func(obj object.Object) {
			if _, ok := obj.(DeletedFinalStateUnknown); ok {
				r.record("delete %s (final state unknown)", object.Key(obj))
				return
			}
			r.record("delete %s", object.Key(obj))
		},
	}
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func (r *recorder) waitFor(t *testing.T, want ...string) {
	t.Helper()
	eventually(t, fmt.Sprintf("events %q", want), func() bool { return len(r.got()) >= len(want) })
	if got := r.got(); !slices.Equal(got, want) {
		t.Fatalf("handler saw\n  %q\nwant\n  %q", got, want)
	}
}

func runInformer(t *testing.T, inf SharedIndexInformer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func newPodInformer(src *cachetest.Source, opts ...ReflectorOption) SharedIndexInformer {
	return NewSharedIndexInformer(src, &corev1.Pod{},
		WithIndexers(Indexers{NamespaceIndex: MetaNamespaceIndexFunc}),
		WithInformerLogger(quiet),
		WithReflectorOptions(append([]ReflectorOption{WithBackoff(Backoff{})}, opts...)...))
}

func TestInformerHandlersSeeAddUpdateDelete(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	mustCreate(t, src, makePod("default", "a").Obj()) // rv 2
	inf := newPodInformer(src)
	rec := &recorder{}
	reg, err := inf.AddEventHandler(rec.handler())
	if err != nil {
		t.Fatal(err)
	}
	runInformer(t, inf)
	eventually(t, "sync", func() bool { return inf.HasSynced() && reg.HasSynced() })

	mustCreate(t, src, makePod("default", "b").Obj())                 // rv 3
	mustUpdate(t, src, makePod("default", "a").Label("x", "y").Obj()) // rv 4
	if err := src.Delete("default", "a"); err != nil {                // rv 5
		t.Fatal(err)
	}
	rec.waitFor(t, "add default/a", "add default/b", "update default/a 2->4", "delete default/a")
	eventually(t, "the cache", converged(inf.GetStore(), src))
	if inf.LastSyncResourceVersion() != "5" {
		t.Errorf("LastSyncResourceVersion = %q", inf.LastSyncResourceVersion())
	}
}

func TestHandlerAddedToARunningInformerIsToldAboutCachedObjects(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	mustCreate(t, src, makePod("default", "a").Obj())
	mustCreate(t, src, makePod("default", "b").Obj())
	inf := newPodInformer(src)
	runInformer(t, inf)
	eventually(t, "sync", inf.HasSynced)

	late := &recorder{}
	reg, err := inf.AddEventHandler(late.handler())
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the late handler to sync", reg.HasSynced)
	got := late.got()
	slices.Sort(got)
	if !slices.Equal(got, []string{"add default/a", "add default/b"}) {
		t.Fatalf("late handler saw %q", got)
	}
	mustCreate(t, src, makePod("default", "c").Obj())
	eventually(t, "the late handler to see new objects", func() bool { return len(late.got()) == 3 })

	if err := inf.RemoveEventHandler(reg); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, src, makePod("default", "d").Obj())
	eventually(t, "the cache", converged(inf.GetStore(), src))
	if n := len(late.got()); n != 3 {
		t.Errorf("a removed handler was told %d events", n)
	}
}

func TestDeletionDuringAnOutageReachesHandlersAsDeletedFinalStateUnknown(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	mustCreate(t, src, makePod("default", "kept").Obj())
	mustCreate(t, src, makePod("default", "gone").Node("n1").Obj())
	fc := clock.NewFake(epoch)
	inf := newPodInformer(src, WithClock(fc), WithBackoff(Backoff{Initial: time.Second}))
	var mu sync.Mutex
	var tombstone *corev1.Pod
	rec := &recorder{}
	h := rec.handler()
	deleteFunc := h.DeleteFunc
	h.DeleteFunc = func(obj object.Object) {
		mu.Lock()
		tombstone, _ = As[*corev1.Pod](obj)
		mu.Unlock()
		deleteFunc(obj)
	}
	inf.AddEventHandler(h)
	runInformer(t, inf)
	eventually(t, "sync", inf.HasSynced)

	src.FailNextWatch(apierrors.NewServiceUnavailable("apiserver restarting"))
	src.DropWatches()
	eventually(t, "the reflector to back off", func() bool { return fc.Waiters() == 1 })
	if err := src.Delete("default", "gone"); err != nil {
		t.Fatal(err)
	}
	src.Compact() // the DELETED event is lost for good: only a relist can tell
	stepUntil(t, fc, "the relist", func() bool { return src.ListCalls() == 2 && converged(inf.GetStore(), src)() })

	// "kept" was relisted unchanged: no update for it.
	rec.waitFor(t, "add default/gone", "add default/kept", "delete default/gone (final state unknown)")
	mu.Lock()
	defer mu.Unlock()
	if tombstone.GetSpec().GetNodeName() != "n1" {
		t.Errorf("the tombstone does not carry the last known state: %v", tombstone)
	}
}

func TestInformerResyncRedeliversCachedObjectsAsUpdates(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	mustCreate(t, src, makePod("default", "a").Obj())
	fc := clock.NewFake(epoch)
	inf := newPodInformer(src, WithClock(fc), WithResyncPeriod(time.Minute))
	rec := &recorder{}
	inf.AddEventHandler(rec.handler())
	runInformer(t, inf)
	rec.waitFor(t, "add default/a")
	eventually(t, "the resync timer", func() bool { return fc.Waiters() == 1 })
	fc.Step(time.Minute)
	rec.waitFor(t, "add default/a", "update default/a 2->2")
}

func TestAddEventHandlerFailsOnAStoppedInformer(t *testing.T) {
	inf := newPodInformer(cachetest.NewSource(&corev1.Pod{}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	inf.Run(ctx)
	if !inf.IsStopped() {
		t.Fatal("IsStopped is false after Run returned")
	}
	if _, err := inf.AddEventHandler(ResourceEventHandlerFuncs{}); err != ErrInformerStopped {
		t.Fatalf("got %v, want ErrInformerStopped", err)
	}
}

// TestInformerTellsHandlersEachChangeOnceUnderRandomFaults checks the whole
// pipeline (reflector, DeltaFIFO, indexer, handlers) against a Source that
// is written to at random while its watches break in every way: a handler
// that rebuilds the state from its notifications must see every add for an
// absent key, every update and delete for a present one, resourceVersions
// only rising, and end equal to the Source and the cache.
func TestInformerTellsHandlersEachChangeOnceUnderRandomFaults(t *testing.T) {
	var coverage faultCoverage
	defer coverage.check(t)
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			src := cachetest.NewSource(&corev1.Pod{})
			for i := range 5 {
				mustCreate(t, src, makePod("default", fmt.Sprintf("pod-%d", i)).Obj())
			}
			inf := newPodInformer(src)
			seen := newStateHandler(t)
			inf.AddEventHandler(seen)
			runInformer(t, inf)
			for step := range 300 {
				if rng.IntN(8) == 0 {
					injectFault(rng, src)
				} else {
					mutate(t, rng, src, 15, step)
				}
				if rng.IntN(20) == 0 {
					time.Sleep(time.Duration(rng.IntN(200)) * time.Microsecond)
				}
			}
			eventually(t, "the cache to converge on "+src.String(), converged(inf.GetStore(), src))
			eventually(t, "the handler to converge on "+src.String(), converged(seen, src))
			coverage.add(src)
		})
	}
}

// stateHandler rebuilds key → object from notifications, checking each.
type stateHandler struct {
	t       *testing.T
	mu      sync.Mutex
	objects map[string]object.Object
}

func newStateHandler(t *testing.T) *stateHandler {
	return &stateHandler{t: t, objects: map[string]object.Object{}}
}

func rvNum(o object.Object) int {
	n, _ := strconv.Atoi(o.GetMetadata().GetResourceVersion())
	return n
}

func (h *stateHandler) OnAdd(obj object.Object) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := object.Key(obj)
	if _, ok := h.objects[k]; ok {
		h.t.Errorf("add of %s, which the handler already has", k)
	}
	h.objects[k] = obj
}

func (h *stateHandler) OnUpdate(old, new object.Object) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := object.Key(new)
	had, ok := h.objects[k]
	switch {
	case !ok:
		h.t.Errorf("update of %s, which the handler does not have", k)
	case rvNum(had) != rvNum(old):
		h.t.Errorf("update of %s from rv %d, but the handler last saw rv %d", k, rvNum(old), rvNum(had))
	case rvNum(new) <= rvNum(old):
		h.t.Errorf("update of %s went from rv %d to %d", k, rvNum(old), rvNum(new))
	}
	h.objects[k] = new
}

func (h *stateHandler) OnDelete(obj object.Object) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := object.Key(obj)
	if _, ok := h.objects[k]; !ok {
		h.t.Errorf("delete of %s, which the handler does not have", k)
	}
	delete(h.objects, k)
}

func (h *stateHandler) List() []object.Object {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]object.Object, 0, len(h.objects))
	for _, o := range h.objects {
		out = append(out, o)
	}
	return out
}
