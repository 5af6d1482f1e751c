package watchcache

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
)

func TestWatchFromListedRevisionSeesAllHundredAppliesInOrder(t *testing.T) {
	c, _ := newCache(t, 10, []object.Object{MakePod("a").RV(3).Obj(), MakePod("b").RV(7).Obj()})
	s := newSource(t, c)
	_, listed := c.List(Filter{})
	if listed != 10 {
		t.Fatalf("List revision = %d, want 10", listed)
	}

	w, err := c.Watch(t.Context(), listed, Filter{}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i := range 100 { // add p0, add p1, modify p1, delete p0, add p4, ...
		switch i % 4 {
		case 0, 1:
			s.put(MakePod(fmt.Sprintf("p%d", i)).Obj())
		case 2:
			s.put(MakePod(fmt.Sprintf("p%d", i-1)).Label("step", fmt.Sprint(i)).Obj())
		case 3:
			s.del(fmt.Sprintf("default/p%d", i-3))
		}
	}
	equal(t, "stream", describeAll(collect(t, w, 100)), want(s.log, listed, Filter{}))
}

func TestResumeFromLastSeenRevisionAfterStopMissesNothingAndRepeatsNothing(t *testing.T) {
	c, _ := newCache(t, 1, nil)
	s := newSource(t, c)
	w, err := c.Watch(t.Context(), 1, Filter{}, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		s.put(MakePod(fmt.Sprintf("p%d", i)).Obj())
	}
	seen := collect(t, w, 4)
	w.Stop()
	seen = append(seen, drain(t, w)...)

	last := seen[len(seen)-1].Object.GetMetadata().GetResourceVersion()
	var from int64
	fmt.Sscan(last, &from)
	for i := range 10 {
		s.put(MakePod(fmt.Sprintf("p%d", i)).Label("round", "2").Obj())
	}
	w2, err := c.Watch(t.Context(), from, Filter{}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	seen = append(seen, collect(t, w2, len(s.log)-len(seen))...)
	equal(t, "first watch then resumed watch", describeAll(seen), want(s.log, 1, Filter{}))
}

func TestWatchFromRevisionOlderThanHistoryIsExpired(t *testing.T) {
	// Ring of 4: after the list at 10, changes 11..16 leave 13..16 in the
	// ring, so a watch may start from 12 (the last change evicted) on.
	c, _ := newCache(t, 10, nil, WithCapacity(4))
	s := newSource(t, c)
	for i := range 6 {
		s.put(MakePod(fmt.Sprintf("p%d", i)).Obj())
	}
	fresh, _ := newCache(t, 10, nil)

	for _, tc := range []struct {
		name    string
		cache   *Cache
		from    int64
		wantErr string
		events  int
	}{
		{name: "before the list the cache started from", cache: fresh, from: 9, wantErr: "too old resource version: 9 (10)"},
		{name: "at the list revision", cache: fresh, from: 10},
		{name: "before the list, history evicted", cache: c, from: 5, wantErr: "too old resource version: 5 (12)"},
		{name: "inside the evicted part of the history", cache: c, from: 11, wantErr: "too old resource version: 11 (12)"},
		{name: "at the last evicted change", cache: c, from: 12, events: 4},
		{name: "inside the ring", cache: c, from: 14, events: 2},
		{name: "at the newest change", cache: c, from: 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := tc.cache.Watch(t.Context(), tc.from, Filter{}, false)
			if tc.wantErr != "" {
				if !apierrors.IsResourceExpired(err) || err.Error() != tc.wantErr {
					t.Fatalf("Watch(%d) = %v, want Expired %q", tc.from, err, tc.wantErr)
				}
				if code := apierrors.FromError(err).ErrStatus.GetCode(); code != 410 {
					t.Errorf("code = %d, want 410", code)
				}
				return
			}
			if err != nil {
				t.Fatalf("Watch(%d): %v", tc.from, err)
			}
			defer w.Stop()
			if tc.events > 0 {
				equal(t, "replay", describeAll(collect(t, w, tc.events)), want(s.log, tc.from, Filter{}))
			}
		})
	}
}

func TestSelectorTransitionsGiveAddedAndDeleted(t *testing.T) {
	type step struct {
		put *corev1.Pod // or
		del string
	}
	web := func() *podBuilder { return MakePod("x").Label("app", "web") }
	for _, tc := range []struct {
		name   string
		filter Filter
		steps  []step
		want   []string
		end    *corev1.Pod // a change the filter sees, to mark the end; default kube-system/end
	}{
		{
			name:   "object starts matching: ADDED",
			filter: Filter{Label: labelIs("app", "web")},
			steps:  []step{{put: MakePod("x").Obj()}, {put: web().Obj()}},
			want:   []string{"ADDED default/x @12 {app=web}"},
		},
		{
			name:   "object keeps matching: MODIFIED",
			filter: Filter{Label: labelIs("app", "web")},
			steps:  []step{{put: web().Obj()}, {put: web().Label("v", "2").Obj()}},
			want:   []string{"ADDED default/x @11 {app=web}", "MODIFIED default/x @12 {app=web,v=2}"},
		},
		{
			name:   "object stops matching: DELETED with its last matching state at the change's revision",
			filter: Filter{Label: labelIs("app", "web")},
			steps:  []step{{put: web().Obj()}, {put: MakePod("x").Label("app", "db").Obj()}},
			want:   []string{"ADDED default/x @11 {app=web}", "DELETED default/x @12 {app=web}"},
		},
		{
			name:   "matching object deleted: DELETED",
			filter: Filter{Label: labelIs("app", "web")},
			steps:  []step{{put: web().Obj()}, {del: "default/x"}},
			want:   []string{"ADDED default/x @11 {app=web}", "DELETED default/x @12 {app=web}"},
		},
		{
			name:   "object that never matches: nothing",
			filter: Filter{Label: labelIs("app", "web")},
			steps:  []step{{put: MakePod("x").Obj()}, {put: MakePod("x").Label("v", "2").Obj()}, {del: "default/x"}},
		},
		{
			name:   "field selector on spec.nodeName: bound pod is ADDED, moved off is DELETED",
			filter: Filter{Field: onNode("n1")},
			steps:  []step{{put: MakePod("x").Obj()}, {put: MakePod("x").Node("n1").Obj()}, {put: MakePod("x").Node("n2").Obj()}},
			want:   []string{"ADDED default/x @12 node=n1", "DELETED default/x @13 node=n1"},
		},
		{
			name:   "namespace: other namespaces are not seen",
			filter: Filter{Namespace: "kube-system"},
			steps:  []step{{put: MakePod("x").Obj()}, {put: MakePod("y").Namespace("kube-system").Obj()}, {del: "default/x"}},
			want:   []string{"ADDED kube-system/y @12"},
		},
		{
			name:   "all parts of a filter must match",
			filter: Filter{Namespace: "default", Label: labelIs("app", "web"), Field: onNode("n1")},
			steps:  []step{{put: web().Obj()}, {put: web().Node("n1").Obj()}, {put: MakePod("x").Node("n1").Obj()}},
			want:   []string{"ADDED default/x @12 node=n1 {app=web}", "DELETED default/x @13 node=n1 {app=web}"},
			end:    MakePod("end").Label("app", "web").Node("n1").Obj(),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newCache(t, 10, nil)
			s := newSource(t, c)
			w, err := c.Watch(t.Context(), 10, tc.filter, false)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			for _, st := range tc.steps {
				if st.put != nil {
					s.put(st.put)
				} else {
					s.del(st.del)
				}
			}
			// A change every filter sees marks the end of the stream.
			if tc.end == nil {
				tc.end = MakePod("end").Namespace("kube-system").Label("app", "web").Node("n1").Obj()
			}
			s.put(tc.end)
			got := describeAll(drainUntil(t, w, s.rev))
			equal(t, "events", got[:len(got)-1], tc.want)
			// And a watch started later replays the same from the ring.
			replay, err := c.Watch(t.Context(), 10, tc.filter, false)
			if err != nil {
				t.Fatal(err)
			}
			defer replay.Stop()
			equal(t, "replayed events", describeAll(drainUntil(t, replay, s.rev)), got)
		})
	}
}

// drainUntil reads events up to and including the one at revision rev.
func drainUntil(t testing.TB, w watch.Interface, rev int64) []watch.Event {
	t.Helper()
	var out []watch.Event
	for {
		ev := next(t, w)
		out = append(out, ev)
		if ev.Object.GetMetadata().GetResourceVersion() == fmt.Sprint(rev) {
			return out
		}
	}
}

func TestWatchFromRevisionZeroSendsSyntheticAddsThenLiveEvents(t *testing.T) {
	clk := clock.NewFake(t0)
	c := New(WithClock(clk))

	// Before the first list there is nothing to serve: the watch waits.
	type result struct {
		w   watch.Interface
		err error
	}
	started := make(chan result, 1)
	go func() {
		w, err := c.Watch(t.Context(), 0, Filter{Label: labelIs("app", "web")}, false)
		started <- result{w, err}
	}()
	select {
	case r := <-started:
		t.Fatalf("Watch(0) before Replace returned %v, %v; want it to wait", r.w, r.err)
	default:
	}
	objs := []object.Object{
		MakePod("c").Label("app", "web").RV(4).Obj(),
		MakePod("a").Label("app", "web").RV(2).Obj(),
		MakePod("z").Label("app", "db").RV(3).Obj(),
		MakePod("b").Namespace("apps").Label("app", "web").RV(5).Obj(),
	}
	c.Replace(objs, 5)
	r := <-started
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.w.Stop()
	s := newSource(t, c)
	s.put(MakePod("d").Label("app", "web").Obj())

	equal(t, "stream", describeAll(collect(t, r.w, 4)), []string{
		"ADDED apps/b @5 {app=web}",
		"ADDED default/a @2 {app=web}",
		"ADDED default/c @4 {app=web}",
		"ADDED default/d @6 {app=web}",
	})
}

func TestWatcherThatNeverReadsIsDroppedWhileApplyGoesOnAndOthersReceive(t *testing.T) {
	const buffer = 8
	c, _ := newCache(t, 1, nil, WithWatcherBuffer(buffer))
	s := newSource(t, c)
	slow, err := c.Watch(t.Context(), 1, Filter{}, false)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := c.Watch(t.Context(), 1, Filter{}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Stop()

	var got []watch.Event
	for i := range 5 * buffer {
		s.put(MakePod(fmt.Sprintf("p%d", i)).Obj()) // returns: Apply never waits for slow
		got = append(got, next(t, fast))
	}
	equal(t, "fast watcher", describeAll(got), want(s.log, 1, Filter{}))

	m := c.Metrics()
	if m.SlowWatchersDropped != 1 || m.Watchers != 1 {
		t.Errorf("metrics = %+v, want 1 slow watcher dropped and 1 left", m)
	}
	// The slow watcher's channel is closed, after at most what it had room for,
	// in order: its client resumes from the last one it read.
	rest := describeAll(drain(t, slow))
	if len(rest) > buffer+1 {
		t.Errorf("slow watcher delivered %d events after being dropped, want at most %d", len(rest), buffer+1)
	}
	equal(t, "slow watcher's prefix", rest, want(s.log, 1, Filter{})[:len(rest)])
}

func TestWatchFromFutureRevisionWaitsThenServes(t *testing.T) {
	c, _ := newCache(t, 10, nil)
	s := newSource(t, c)
	type result struct {
		w   watch.Interface
		err error
	}
	started := make(chan result, 1)
	go func() {
		w, err := c.Watch(t.Context(), 15, Filter{}, false)
		started <- result{w, err}
	}()
	for i := range 4 { // 11..14
		s.put(MakePod(fmt.Sprintf("p%d", i)).Obj())
		select {
		case r := <-started:
			t.Fatalf("Watch(15) returned at revision %d: %v", s.rev, r.err)
		default:
		}
	}
	s.progress(1) // 15, without a change
	s.put(MakePod("after").Obj())
	r := <-started
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.w.Stop()
	equal(t, "stream", describeAll(collect(t, r.w, 1)), []string{"ADDED default/after @16"})
}

func TestWaitUntilFreshGivesUp(t *testing.T) {
	t.Run("after the fresh timeout on the cache's clock: Too large resource version", func(t *testing.T) {
		c, clk := newCache(t, 10, nil, WithFreshTimeout(3*time.Second))
		errc := make(chan error, 1)
		go func() {
			_, err := c.Watch(t.Context(), 20, Filter{}, false)
			errc <- err
		}()
		clk.BlockUntilWaiters(1)
		clk.Step(3 * time.Second)
		err := <-errc
		if !apierrors.IsTimeout(err) || err.Error() != "Timeout: Too large resource version: 20, current: 10" {
			t.Fatalf("err = %v, want Timeout: Too large resource version", err)
		}
		causes := apierrors.FromError(err).ErrStatus.GetDetails().GetCauses()
		if len(causes) != 1 || causes[0].GetReason() != "ResourceVersionTooLarge" {
			t.Errorf("causes = %v, want ResourceVersionTooLarge", causes)
		}
	})
	t.Run("when the context ends", func(t *testing.T) {
		c, _ := newCache(t, 10, nil, WithFreshTimeout(0))
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() { errc <- c.WaitUntilFresh(ctx, 11) }()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("before the first Replace: storage is initializing", func(t *testing.T) {
		clk := clock.NewFake(t0)
		c := New(WithClock(clk))
		errc := make(chan error, 1)
		go func() { errc <- c.WaitUntilFresh(t.Context(), 0) }()
		clk.BlockUntilWaiters(1)
		clk.Step(DefaultFreshTimeout)
		if err := <-errc; !apierrors.IsTooManyRequests(err) {
			t.Fatalf("err = %v, want TooManyRequests", err)
		}
	})
}

func TestBookmarksAfterProgressWithFakeClock(t *testing.T) {
	const interval = time.Minute
	c, clk := newCache(t, 10, nil, WithBookmarkInterval(interval))
	s := newSource(t, c)
	w, err := c.Watch(t.Context(), 10, Filter{}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	plain, err := c.Watch(t.Context(), 10, Filter{}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Stop()
	webOnly, err := c.Watch(t.Context(), 10, Filter{Label: labelIs("app", "web")}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer webOnly.Stop()

	// Each step does something and then applies a change every watcher
	// sees; what a watcher receives before that change is what the step
	// caused.
	marker := 0
	mark := func() {
		marker++
		s.put(MakePod(fmt.Sprintf("mark%d", marker)).Label("app", "web").Obj())
	}
	for _, tc := range []struct {
		name        string
		do          func()
		w, webOnly  []string
		plainEvents int
	}{
		{
			name: "progress before an interval has passed: no bookmark",
			do:   func() { s.progress(2) },
		},
		{
			name: "progress an interval after the last event: bookmark at the progress revision",
			do:   func() { clk.Step(interval); s.progress(3) },
			w:    []string{"BOOKMARK @16"}, webOnly: []string{"BOOKMARK @16"},
		},
		{
			name: "Tick an interval later without the revision moving: no bookmark",
			do:   func() { clk.Step(interval); c.Tick() },
		},
		{
			name: "half an interval is not enough, Tick at a full one sends it",
			do: func() {
				s.put(MakePod("db").Label("app", "db").Obj()) // @19: w sees it, webOnly does not
				clk.Step(interval / 2)
				s.progress(1) // @20
				clk.Step(interval / 2)
				c.Tick()
			},
			w:           []string{"ADDED default/db @19 {app=db}", "BOOKMARK @20"},
			webOnly:     []string{"BOOKMARK @20"},
			plainEvents: 1,
		},
		{
			name: "a change the watcher filters out moves the revision: bookmark from Apply",
			do: func() {
				clk.Step(interval)
				s.put(MakePod("db").Label("app", "db").Label("v", "2").Obj()) // @22
			},
			w:           []string{"MODIFIED default/db @22 {app=db,v=2}"},
			webOnly:     []string{"BOOKMARK @22"},
			plainEvents: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.do()
			mark()
			markEv := describe(watch.Added, s.log[len(s.log)-1].obj)
			equal(t, "watcher with bookmarks", describeAll(drainUntil(t, w, s.rev)), append(tc.w, markEv))
			equal(t, "filtered watcher with bookmarks", describeAll(drainUntil(t, webOnly, s.rev)), append(tc.webOnly, markEv))
			if got := drainUntil(t, plain, s.rev); len(got) != tc.plainEvents+1 {
				t.Errorf("watcher without bookmarks got %v", describeAll(got))
			}
		})
	}

	// The bookmark object: an empty Pod with only metadata.resourceVersion.
	clk.Step(interval)
	s.progress(1)
	bm := next(t, w)
	pod, ok := bm.Object.(*corev1.Pod)
	if bm.Type != watch.Bookmark || !ok {
		t.Fatalf("event = %s %T, want BOOKMARK *corev1.Pod", bm.Type, bm.Object)
	}
	if pod.GetMetadata().GetResourceVersion() != fmt.Sprint(s.rev) || pod.GetMetadata().GetName() != "" || pod.GetSpec() != nil || pod.GetKind() != "" {
		t.Errorf("bookmark object = %v, want only resourceVersion %d", pod, s.rev)
	}
	if m := c.Metrics(); m.BookmarksSent != 7 {
		t.Errorf("BookmarksSent = %d, want 7", m.BookmarksSent)
	}
}

func TestApplyRejectsOutOfOrderAndInvalidEvents(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cache   func() *Cache
		ev      Event
		wantErr error
	}{
		{
			name:    "revision equal to the cache's",
			ev:      Event{Type: watch.Added, Object: MakePod("a").Obj(), Revision: 12},
			wantErr: ErrOutOfOrder,
		},
		{
			name:    "revision below the cache's",
			ev:      Event{Type: watch.Modified, Object: MakePod("a").Obj(), Revision: 11},
			wantErr: ErrOutOfOrder,
		},
		{
			name:    "revision at or below a progress notification",
			ev:      Event{Type: watch.Added, Object: MakePod("b").Obj(), Revision: 13},
			wantErr: ErrOutOfOrder,
			cache: func() *Cache {
				c, _ := newCache(t, 10, nil)
				c.Apply(Event{Type: watch.Added, Object: MakePod("a").RV(12).Obj(), Revision: 12})
				c.Progress(14)
				return c
			},
		},
		{
			name:    "not a change",
			ev:      Event{Type: watch.Bookmark, Object: MakePod("a").Obj(), Revision: 20},
			wantErr: ErrInvalidEvent,
		},
		{
			name:    "no object",
			ev:      Event{Type: watch.Added, Revision: 20},
			wantErr: ErrInvalidEvent,
		},
		{
			name:    "before the first Replace",
			ev:      Event{Type: watch.Added, Object: MakePod("a").Obj(), Revision: 20},
			wantErr: ErrNotInitialized,
			cache:   func() *Cache { return New() },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c *Cache
			if tc.cache != nil {
				c = tc.cache()
			} else {
				c, _ = newCache(t, 10, nil)
				if err := c.Apply(Event{Type: watch.Added, Object: MakePod("a").RV(12).Obj(), Revision: 12}); err != nil {
					t.Fatal(err)
				}
			}
			before := c.Metrics()
			if err := c.Apply(tc.ev); !errors.Is(err, tc.wantErr) {
				t.Fatalf("Apply = %v, want %v", err, tc.wantErr)
			}
			if after := c.Metrics(); after != before {
				t.Errorf("a rejected event changed the cache: %+v -> %+v", before, after)
			}
		})
	}
}

func TestStopAndContextCancelEndTheWatchAndReleaseItsSlot(t *testing.T) {
	c, _ := newCache(t, 1, nil)
	s := newSource(t, c)

	stopped, _ := c.Watch(t.Context(), 1, Filter{}, false)
	s.put(MakePod("a").Obj()) // undelivered when Stop comes
	stopped.Stop()
	if n := c.Metrics().Watchers; n != 0 {
		t.Errorf("after Stop, Watchers = %d, want 0", n)
	}
	drain(t, stopped)
	stopped.Stop() // twice is fine

	ctx, cancel := context.WithCancel(t.Context())
	canceled, _ := c.Watch(ctx, 1, Filter{}, false)
	cancel()
	drain(t, canceled)
	if n := c.Metrics().Watchers; n != 0 {
		t.Errorf("after cancel, Watchers = %d, want 0", n)
	}
	s.put(MakePod("b").Obj()) // nobody to deliver to
	if m := c.Metrics(); m.EventsQueued != 1 {
		t.Errorf("EventsQueued = %d, want 1 (only to the watch that was later stopped)", m.EventsQueued)
	}
}

func TestReplaceClosesWatchersAndHistoryStartsAtItsRevision(t *testing.T) {
	c, _ := newCache(t, 10, []object.Object{MakePod("old").RV(9).Obj()})
	s := newSource(t, c)
	s.put(MakePod("a").Obj())
	w, err := c.Watch(t.Context(), 10, Filter{}, false)
	if err != nil {
		t.Fatal(err)
	}
	next(t, w)

	c.Replace([]object.Object{MakePod("b").RV(40).Obj(), MakePod("a").RV(30).Obj()}, 50)
	if rest := drain(t, w); len(rest) != 0 {
		t.Errorf("after Replace the watch delivered %v, want it closed", describeAll(rest))
	}
	if _, err := c.Watch(t.Context(), 11, Filter{}, false); !apierrors.IsResourceExpired(err) || err.Error() != "too old resource version: 11 (50)" {
		t.Errorf("resume from before the relist: %v, want Expired", err)
	}
	objs, rev := c.List(Filter{})
	got := make([]string, len(objs))
	for i, o := range objs {
		got[i] = describe(watch.Added, o)
	}
	equal(t, "List after Replace", got, []string{"ADDED default/a @30", "ADDED default/b @40"})
	if rev != 50 {
		t.Errorf("List revision = %d, want 50", rev)
	}
	w2, err := c.Watch(t.Context(), 50, Filter{}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	c.Apply(Event{Type: watch.Added, Object: MakePod("c").RV(51).Obj(), Revision: 51})
	equal(t, "watch from the relist", describeAll(collect(t, w2, 1)), []string{"ADDED default/c @51"})
}

func TestListReturnsTheMatchingCurrentStateSortedByKey(t *testing.T) {
	c, _ := newCache(t, 10, []object.Object{
		MakePod("b").Label("app", "web").RV(5).Obj(),
		MakePod("a").Label("app", "db").RV(6).Obj(),
		MakePod("c").Namespace("apps").Label("app", "web").RV(7).Obj(),
	})
	s := newSource(t, c)
	s.put(MakePod("a").Label("app", "web").Obj())
	s.del("default/b")
	s.put(MakePod("d").Label("app", "web").Obj())

	for _, tc := range []struct {
		name   string
		filter Filter
		want   []string
	}{
		{"everything", Filter{}, []string{"ADDED apps/c @7 {app=web}", "ADDED default/a @11 {app=web}", "ADDED default/d @13 {app=web}"}},
		{"one namespace", Filter{Namespace: "default"}, []string{"ADDED default/a @11 {app=web}", "ADDED default/d @13 {app=web}"}},
		{"no match", Filter{Label: labelIs("app", "db")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, rev := c.List(tc.filter)
			var got []string
			for _, o := range objs {
				got = append(got, describe(watch.Added, o))
			}
			equal(t, "List", got, tc.want)
			if rev != 13 {
				t.Errorf("revision = %d, want 13", rev)
			}
		})
	}
}

func TestGetReturnsTheCurrentObjectByKey(t *testing.T) {
	c, _ := newCache(t, 10, []object.Object{MakePod("a").RV(5).Obj(), MakePod("b").RV(6).Obj()})
	s := newSource(t, c)
	s.put(MakePod("a").Label("app", "web").Obj())
	s.del("default/b")
	if o, rev, ok := c.Get("default/a"); !ok || describe(watch.Added, o) != "ADDED default/a @11 {app=web}" || rev != 12 {
		t.Errorf("Get(default/a) = %v @%d %v", o, rev, ok)
	}
	if o, _, ok := c.Get("default/b"); ok {
		t.Errorf("deleted default/b is still there: %v", o)
	}
	if _, _, ok := c.Get("a"); ok {
		t.Error("a namespaced object is found without its namespace")
	}
}

func TestWatchRejectsNegativeRevision(t *testing.T) {
	c, _ := newCache(t, 10, nil)
	if _, err := c.Watch(t.Context(), -1, Filter{}, false); !apierrors.IsBadRequest(err) {
		t.Fatalf("err = %v, want BadRequest", err)
	}
}

func TestCacheNeverChangesTheObjectsItIsGiven(t *testing.T) {
	listed := MakePod("a").Label("app", "web").RV(5).Obj()
	c, _ := newCache(t, 10, []object.Object{listed})
	s := newSource(t, c)
	w, err := c.Watch(t.Context(), 10, Filter{Label: labelIs("app", "web")}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	given := []*corev1.Pod{listed}
	given = append(given, s.put(MakePod("a").Label("app", "db").Obj())) // DELETED for w: a copy of listed at @11
	given = append(given, s.put(MakePod("a").Label("app", "web").Obj()))
	given = append(given, s.del("default/a"))
	snapshots := make([]*corev1.Pod, len(given))
	for i, p := range given {
		snapshots[i] = object.Copy(p)
	}
	evs := collect(t, w, 3)
	equal(t, "events", describeAll(evs), []string{
		"DELETED default/a @11 {app=web}", "ADDED default/a @12 {app=web}", "DELETED default/a @13 {app=web}",
	})
	if evs[0].Object == object.Object(listed) {
		t.Errorf("the DELETED of a transition is the listed object itself, want a copy")
	}
	for i, p := range given {
		if !proto.Equal(p, snapshots[i]) {
			t.Errorf("object %d changed: %v, was %v", i, p, snapshots[i])
		}
	}
}

func TestTriggeredWatchersAreOnlyAskedAboutTheirValue(t *testing.T) {
	c, _ := newCache(t, 1, nil, WithTrigger(nodeOf))
	src := newSource(t, c)
	calls := 0
	f := Filter{Field: func(o object.Object) bool { calls++; return nodeOf(o) == "n1" }, Triggered: true, Trigger: "n1"}
	w, err := c.Watch(context.Background(), 1, f, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i := range 10 {
		src.put(MakePod(fmt.Sprintf("other-%d", i)).Node("n2").Obj())
	}
	if calls != 0 {
		t.Errorf("the n1 watcher's filter ran %d times for pods on n2", calls)
	}
	p := src.put(MakePod("moving").Node("n2").Obj())
	p = object.Copy(p)
	p.Spec.NodeName = "n1"
	src.put(p) // its new state is on n1: the watcher sees it arrive
	p = object.Copy(p)
	p.Spec.NodeName = "n3"
	src.put(p) // and leave (DELETED carries the last state it matched in)
	equal(t, "events", describeAll(collect(t, w, 2)), []string{
		"ADDED default/moving @13 node=n1", "DELETED default/moving @14 node=n1",
	})
}
