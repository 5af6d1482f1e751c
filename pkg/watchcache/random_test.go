package watchcache

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
)

// TestRandomWatchersEachSeeTheirSliceOfTheLog applies random changes (with
// revision gaps and progress notifications) while watchers with random
// filters start at random revisions, reading concurrently. Each watcher's
// stream must equal the part of the full log after its start revision,
// converted for its filter (ADDED/MODIFIED/DELETED on transitions), preceded
// by synthetic ADDs for a watch from 0, and followed by one bookmark at the
// final revision; a start revision older than the ring's history must be
// 410 Expired with the oldest revision the model predicts.
func TestRandomWatchersEachSeeTheirSliceOfTheLog(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { randomRun(t, seed) })
	}
}

var randomFilters = []struct {
	name string
	f    Filter
}{
	{"all", Filter{}},
	{"ns1", Filter{Namespace: "ns1"}},
	{"app=a", Filter{Label: labelIs("app", "a")}},
	{"ns0,app=b", Filter{Namespace: "ns0", Label: labelIs("app", "b")}},
	{"node=n1", Filter{Field: onNode("n1")}},
	{"app=a,node=n2", Filter{Label: labelIs("app", "a"), Field: onNode("n2")}},
	// The same selections, indexed by the cache's trigger (the node).
	{"node=n1 (triggered)", Filter{Field: onNode("n1"), Triggered: true, Trigger: "n1"}},
	{"app=a,node=n2 (triggered)", Filter{Label: labelIs("app", "a"), Field: onNode("n2"), Triggered: true, Trigger: "n2"}},
	{"node= (triggered)", Filter{Field: onNode(""), Triggered: true, Trigger: ""}},
}

type randomWatcher struct {
	name     string
	from     int64
	filter   Filter
	initial  []string // synthetic ADDs expected for a watch from 0
	startLog int      // len(log) when it started (for from == 0)
	got      chan []string
}

func randomRun(t *testing.T, seed uint64) {
	const (
		capacity = 48
		steps    = 700
	)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	clk := clock.NewFake(t0)
	c := New(WithClock(clk), WithCapacity(capacity), WithWatcherBuffer(1<<20), WithBookmarkInterval(time.Minute), WithTrigger(nodeOf))
	var initial []object.Object
	for i := range 5 {
		initial = append(initial, randomPod(rng, i).RV(int64(90+i)).Obj())
	}
	c.Replace(initial, 100)
	s := newSource(t, c)

	oldest := func() int64 { // the model's oldest revision a watch may start from
		if len(s.log) > capacity {
			return s.log[len(s.log)-capacity-1].rev
		}
		return 100
	}
	var watchers []*randomWatcher
	for range steps {
		switch r := rng.IntN(100); {
		case r < 8: // start a watcher
			rf := randomFilters[rng.IntN(len(randomFilters))]
			var from int64
			switch k := rng.IntN(10); {
			case k == 0:
				from = 0
			case k < 3: // possibly too old
				from = max(oldest()-int64(rng.IntN(20)), 1)
			default:
				from = oldest() + rng.Int64N(s.rev-oldest()+1)
			}
			w, err := c.Watch(t.Context(), from, rf.f, true)
			if from > 0 && from < oldest() {
				msg := fmt.Sprintf("too old resource version: %d (%d)", from, oldest())
				if !apierrors.IsResourceExpired(err) || err.Error() != msg {
					t.Fatalf("Watch(%d) = %v, want Expired %q", from, err, msg)
				}
				continue
			}
			if err != nil {
				t.Fatalf("Watch(%d): %v", from, err)
			}
			rw := &randomWatcher{name: fmt.Sprintf("%s from %d", rf.name, from), from: from, filter: rf.f, got: make(chan []string, 1)}
			if from == 0 {
				rw.from = s.rev
				for _, k := range slices.Sorted(maps.Keys(s.state)) {
					if p := s.state[k]; rf.f.Matches(p) {
						rw.initial = append(rw.initial, describe(watch.Added, p))
					}
				}
			}
			watchers = append(watchers, rw)
			go readUntilBookmark(w, rw.got)
		case r < 12:
			s.progress(1 + rng.Int64N(3))
		case r < 20 && len(s.state) > 0:
			keys := slices.Sorted(maps.Keys(s.state))
			s.del(keys[rng.IntN(len(keys))])
		default:
			s.rev += rng.Int64N(3) // other resources' writes: gaps in this one's revisions
			s.put(randomPod(rng, rng.IntN(30)).Obj())
		}
	}
	if len(watchers) < 20 {
		t.Fatalf("only %d watchers started; the run checks too little", len(watchers))
	}

	// Every watcher has been idle since it was last told anything: one
	// interval later, a progress notification gives each a bookmark at the
	// final revision, which ends its stream.
	clk.Step(time.Minute)
	s.progress(1)
	final := "BOOKMARK @" + strconv.FormatInt(s.rev, 10)
	for _, rw := range watchers {
		wantStream := append(append(slices.Clone(rw.initial), want(s.log, rw.from, rw.filter)...), final)
		var got []string
		select {
		case got = <-rw.got:
		case <-time.After(guard):
			t.Fatalf("%s: stream did not end within %v", rw.name, guard)
		}
		equal(t, rw.name, got, wantStream)
	}
	if m := c.Metrics(); m.SlowWatchersDropped != 0 {
		t.Errorf("%d watchers dropped as slow", m.SlowWatchersDropped)
	}
}

// readUntilBookmark reads a watch like a client would, until the first
// bookmark, then stops it.
func readUntilBookmark(w watch.Interface, out chan<- []string) {
	defer w.Stop()
	var got []string
	for ev := range w.ResultChan() {
		got = append(got, describe(ev.Type, ev.Object))
		if ev.Type == watch.Bookmark {
			break
		}
	}
	out <- got
}

func randomPod(rng *rand.Rand, i int) *podBuilder {
	b := MakePod(fmt.Sprintf("p%d", i)).Namespace(fmt.Sprintf("ns%d", i%3))
	if app := []string{"", "a", "b", "c"}[rng.IntN(4)]; app != "" {
		b.Label("app", app)
	}
	if rng.IntN(2) == 0 {
		b.Label("tier", fmt.Sprint(rng.IntN(3)))
	}
	return b.Node([]string{"", "n1", "n2"}[rng.IntN(3)])
}
