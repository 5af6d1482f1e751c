package podworkers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/clock"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// fakeSyncer records each call on a channel and answers from its fields.
type fakeSyncer struct {
	mu       sync.Mutex
	calls    chan string
	terminal bool
	requeue  time.Duration
	syncErr  error
	block    chan struct{} // when set, SyncPod waits on it
	graces   []*int64
}

func newFakeSyncer() *fakeSyncer { return &fakeSyncer{calls: make(chan string, 100)} }

func (f *fakeSyncer) SyncPod(ctx context.Context, t UpdateType, pod *corev1.Pod) (bool, time.Duration, error) {
	f.mu.Lock()
	block, terminal, requeue, err := f.block, f.terminal, f.requeue, f.syncErr
	f.mu.Unlock()
	f.calls <- "sync:" + t.String() + ":" + pod.GetMetadata().GetName()
	if block != nil {
		<-block
	}
	return terminal, requeue, err
}

func (f *fakeSyncer) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, grace *int64) error {
	f.mu.Lock()
	f.graces = append(f.graces, grace)
	f.mu.Unlock()
	f.calls <- "terminating:" + pod.GetMetadata().GetName()
	return nil
}

func (f *fakeSyncer) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod) error {
	f.calls <- "terminated:" + pod.GetMetadata().GetName()
	return nil
}

func (f *fakeSyncer) set(fn func(f *fakeSyncer)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// next waits for the next call.
func (f *fakeSyncer) next(t *testing.T) string {
	t.Helper()
	select {
	case c := <-f.calls:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("no call")
		return ""
	}
}

// none checks that no call comes for a moment.
func (f *fakeSyncer) none(t *testing.T) {
	t.Helper()
	select {
	case c := <-f.calls:
		t.Fatalf("unexpected call %s", c)
	case <-time.After(50 * time.Millisecond):
	}
}

type podBuilder struct{ pod *corev1.Pod }

func makePod(name string) *podBuilder {
	return &podBuilder{&corev1.Pod{Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default", Uid: "uid-" + name}, Spec: &corev1.PodSpec{}}}
}

func (b *podBuilder) deleted(grace int64) *podBuilder {
	b.pod.Metadata.DeletionTimestamp = &metav1.Time{Seconds: 1}
	b.pod.Metadata.DeletionGracePeriodSeconds = proto.Int64(grace)
	return b
}

func (b *podBuilder) obj() *corev1.Pod { return b.pod }

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func setup(t *testing.T) (*Workers, *fakeSyncer, *clock.Fake) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	fs := newFakeSyncer()
	c := clock.NewFake(t0)
	w := New(ctx, fs, c, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{Resync: 10 * time.Second, RetryBase: time.Second, RetryMax: 4 * time.Second})
	t.Cleanup(func() {
		fs.set(func(f *fakeSyncer) {
			if f.block != nil {
				close(f.block)
				f.block = nil
			}
		})
		cancel()
		w.Wait()
	})
	return w, fs, c
}

// waitTimers waits until the workers wait on n timers.
func waitTimers(t *testing.T, c *clock.Fake, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.Waiters() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d timers, want %d", c.Waiters(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func waitState(t *testing.T, w *Workers, uid string, want State) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if s, ok := w.State(uid); ok && s == want {
			return
		}
		if time.Now().After(deadline) {
			s, _ := w.State(uid)
			t.Fatalf("state %s, want %s", s, want)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestANewPodIsSyncedAsCreateThenResyncedPeriodically(t *testing.T) {
	w, fs, c := setup(t)
	w.UpdatePod(makePod("web").obj(), Create, nil)
	if got := fs.next(t); got != "sync:create:web" {
		t.Fatalf("first call %s", got)
	}
	waitTimers(t, c, 1)
	c.Step(10 * time.Second)
	if got := fs.next(t); got != "sync:sync:web" {
		t.Fatalf("resync call %s", got)
	}
	w.UpdatePod(makePod("web").obj(), Update, nil)
	if got := fs.next(t); got != "sync:update:web" {
		t.Fatalf("update call %s", got)
	}
}

func TestADeletedPodIsTerminatedWithItsGracePeriodThenFinished(t *testing.T) {
	w, fs, _ := setup(t)
	w.UpdatePod(makePod("web").obj(), Create, nil)
	fs.next(t)
	w.UpdatePod(makePod("web").deleted(5).obj(), Update, nil)
	for _, want := range []string{"terminating:web", "terminated:web"} {
		if got := fs.next(t); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	waitState(t, w, "uid-web", Finished)
	fs.none(t)
	if g := fs.graces[0]; g == nil || *g != 5 {
		t.Fatalf("grace %v, want 5", g)
	}
	w.Trigger("uid-web")
	fs.none(t) // a finished pod is never synced again
}

func TestAPodThatFinishesByItselfIsTerminated(t *testing.T) {
	w, fs, _ := setup(t)
	fs.set(func(f *fakeSyncer) { f.terminal = true })
	w.UpdatePod(makePod("job").obj(), Create, nil)
	for _, want := range []string{"sync:create:job", "terminating:job", "terminated:job"} {
		if got := fs.next(t); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	waitState(t, w, "uid-job", Finished)
}

func TestAFinishedPodDeletedLaterCompletesItsDeletion(t *testing.T) {
	w, fs, _ := setup(t)
	fs.set(func(f *fakeSyncer) { f.terminal = true })
	w.UpdatePod(makePod("job").obj(), Create, nil)
	for range 3 {
		fs.next(t)
	}
	waitState(t, w, "uid-job", Finished)
	w.UpdatePod(makePod("job").deleted(30).obj(), Update, nil)
	if got := fs.next(t); got != "terminated:job" {
		t.Fatalf("got %s, want the terminated step again", got)
	}
	waitState(t, w, "uid-job", Finished)
}

func TestAFailedSyncIsRetriedWithAGrowingDelay(t *testing.T) {
	w, fs, c := setup(t)
	fs.set(func(f *fakeSyncer) { f.syncErr = errors.New("boom") })
	w.UpdatePod(makePod("web").obj(), Create, nil)
	fs.next(t)
	for _, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		waitTimers(t, c, 1)
		c.Step(d - time.Millisecond)
		fs.none(t)
		c.Step(time.Millisecond)
		if got := fs.next(t); got != "sync:sync:web" {
			t.Fatalf("retry after %v: %s", d, got)
		}
	}
}

func TestRequeueAfterShortensTheNextSync(t *testing.T) {
	w, fs, c := setup(t)
	fs.set(func(f *fakeSyncer) { f.requeue = 3 * time.Second })
	w.UpdatePod(makePod("web").obj(), Create, nil)
	fs.next(t)
	waitTimers(t, c, 1)
	c.Step(3 * time.Second)
	if got := fs.next(t); got != "sync:sync:web" {
		t.Fatalf("got %s", got)
	}
}

func TestUpdatesDuringASyncAreCoalescedIntoOne(t *testing.T) {
	w, fs, _ := setup(t)
	block := make(chan struct{})
	fs.set(func(f *fakeSyncer) { f.block = block })
	w.UpdatePod(makePod("web").obj(), Create, nil)
	fs.next(t) // blocked in the first sync
	for i := range 3 {
		p := makePod("web").obj()
		p.Metadata.ResourceVersion = fmt.Sprint(i)
		w.UpdatePod(p, Update, nil)
	}
	fs.set(func(f *fakeSyncer) { f.block = nil })
	close(block)
	if got := fs.next(t); got != "sync:update:web" {
		t.Fatalf("got %s", got)
	}
	fs.none(t)
}

func TestAKillForAPodNeverSeenTerminatesIt(t *testing.T) {
	w, fs, _ := setup(t)
	w.UpdatePod(makePod("orphan").obj(), Kill, proto.Int64(0))
	for _, want := range []string{"terminating:orphan", "terminated:orphan"} {
		if got := fs.next(t); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	waitState(t, w, "uid-orphan", Finished)
}

func TestSyncKnownPodsTerminatesVanishedPodsAndForgetsFinishedOnes(t *testing.T) {
	w, fs, _ := setup(t)
	w.UpdatePod(makePod("a").obj(), Create, nil)
	w.UpdatePod(makePod("b").obj(), Create, nil)
	fs.next(t)
	fs.next(t)
	w.SyncKnownPods(map[string]bool{"uid-a": true})
	for _, want := range []string{"terminating:b", "terminated:b"} {
		if got := fs.next(t); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	waitState(t, w, "uid-b", Finished)
	w.SyncKnownPods(map[string]bool{"uid-a": true})
	if _, ok := w.State("uid-b"); ok {
		t.Fatal("finished worker of a vanished pod was kept")
	}
	if s, _ := w.State("uid-a"); s != Syncing {
		t.Fatalf("a is %s", s)
	}
	if n := len(w.Active()); n != 1 {
		t.Fatalf("%d active pods", n)
	}
}
