package feed

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	"podline.dev/pkg/watchcache"
	"podline.dev/pkg/watchstream"
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// fakeAPI is the apiserver's history of one resource: it lists at any
// revision from oldest and replays watches from there.
type fakeAPI struct {
	mu      sync.Mutex
	events  []watchcache.Event
	oldest  int64
	lists   int
	watches int
}

func (a *fakeAPI) add(typ watch.EventType, name string, rev int64) watchcache.Event {
	p := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: strconv.FormatInt(rev, 10)}}
	ev := watchcache.Event{Type: typ, Object: p, Revision: rev}
	a.events = append(a.events, ev)
	return ev
}

func (a *fakeAPI) List(_ context.Context, opts *metav1.ListRequest) ([]object.Object, *metav1.ListMeta, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lists++
	at := a.events[len(a.events)-1].Revision
	if opts.GetResourceVersionMatch() == "Exact" {
		at, _ = strconv.ParseInt(opts.GetResourceVersion(), 10, 64)
		if at < a.oldest {
			return nil, nil, apierrors.NewResourceExpired("too old resource version")
		}
	}
	state := map[string]object.Object{}
	for _, ev := range a.events {
		if ev.Revision > at {
			break
		}
		if ev.Type == watch.Deleted {
			delete(state, ev.Object.GetMetadata().GetName())
		} else {
			state[ev.Object.GetMetadata().GetName()] = ev.Object
		}
	}
	var items []object.Object
	for _, o := range state {
		items = append(items, o)
	}
	return items, &metav1.ListMeta{ResourceVersion: strconv.FormatInt(at, 10)}, nil
}

func (a *fakeAPI) Watch(ctx context.Context, opts *metav1.ListRequest) (watch.Interface, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.watches++
	from, _ := strconv.ParseInt(opts.GetResourceVersion(), 10, 64)
	if from < a.oldest {
		return nil, apierrors.NewResourceExpired("too old resource version")
	}
	ch := make(chan watch.Event, len(a.events))
	for _, ev := range a.events {
		if ev.Revision > from {
			ch <- watch.Event{Type: ev.Type, Object: ev.Object}
		}
	}
	return &fakeWatch{ch: ch}, nil
}

type fakeWatch struct{ ch chan watch.Event }

func (w *fakeWatch) ResultChan() <-chan watch.Event { return w.ch }
func (w *fakeWatch) Stop()                          {}

func msg(t *testing.T, ev watchcache.Event, seq uint64) *watchstream.Message {
	t.Helper()
	b, err := proto.Marshal(ev.Object)
	if err != nil {
		t.Fatal(err)
	}
	return &watchstream.Message{Kind: watchstream.KindEvent, Type: string(ev.Type), Revision: ev.Revision, Sequence: seq, Epoch: "e1", Object: b}
}

func newFeeder(t *testing.T, api *fakeAPI) (*Feeder, *watchcache.Cache) {
	t.Helper()
	pods, _ := apis.ByMessage("podline.core.v1.Pod")
	cache := watchcache.New(watchcache.WithCapacity(100))
	f, err := New(pods, cache, api, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f, cache
}

// drain reads the events a watch from rev delivers at once.
func drain(t *testing.T, cache *watchcache.Cache, from int64) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := cache.Watch(ctx, from, watchcache.Filter{}, false)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		select {
		case ev := <-w.ResultChan():
			out = append(out, string(ev.Type)+" "+ev.Object.GetMetadata().GetName()+"@"+ev.Object.GetMetadata().GetResourceVersion())
		case <-time.After(100 * time.Millisecond):
			return out
		}
	}
}

func equal(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestFirstMessageBasesTheCacheJustBeforeIt(t *testing.T) {
	api := &fakeAPI{}
	api.add(watch.Added, "a", 2)
	e3 := api.add(watch.Added, "b", 3)
	e4 := api.add(watch.Modified, "a", 4)
	f, cache := newFeeder(t, api)
	ctx := context.Background()
	for i, ev := range []watchcache.Event{e3, e4} {
		if err := f.handle(ctx, msg(t, ev, uint64(i+7)), ""); err != nil {
			t.Fatal(err)
		}
	}
	// Listed exactly at 2, then replayed: history from 2 on.
	equal(t, drain(t, cache, 2), []string{"ADDED b@3", "MODIFIED a@4"})
	if s := f.Stats(); s.Applied != 2 || s.Fills != 0 || s.Relists != 0 {
		t.Errorf("stats %+v", s)
	}
}

func TestSequenceGapIsFilledFromTheApiserverWatch(t *testing.T) {
	api := &fakeAPI{}
	e2 := api.add(watch.Added, "a", 2)
	e3 := api.add(watch.Added, "b", 3)
	api.add(watch.Added, "c", 4) // its message is lost
	api.add(watch.Deleted, "a", 5)
	e6 := api.add(watch.Modified, "b", 6)
	f, cache := newFeeder(t, api)
	ctx := context.Background()
	for _, m := range []*watchstream.Message{msg(t, e2, 1), msg(t, e3, 2), msg(t, e6, 5)} {
		if err := f.handle(ctx, m, ""); err != nil {
			t.Fatal(err)
		}
	}
	equal(t, drain(t, cache, 1), []string{"ADDED a@2", "ADDED b@3", "ADDED c@4", "DELETED a@5", "MODIFIED b@6"})
	if s := f.Stats(); s.Fills != 1 || s.Filled != 2 || s.Relists != 0 {
		t.Errorf("stats %+v, want one fill of 2 events", s)
	}
}

func TestReplayedEventsAreNotAppliedTwice(t *testing.T) {
	api := &fakeAPI{}
	e2 := api.add(watch.Added, "a", 2)
	e3 := api.add(watch.Added, "b", 3)
	f, cache := newFeeder(t, api)
	ctx := context.Background()
	for _, m := range []*watchstream.Message{msg(t, e2, 1), msg(t, e3, 2)} {
		if err := f.handle(ctx, m, ""); err != nil {
			t.Fatal(err)
		}
	}
	// A new publisher epoch starts again at 1 with an event already held.
	again := msg(t, e3, 1)
	again.Epoch = "e2"
	if err := f.handle(ctx, again, ""); err != nil {
		t.Fatal(err)
	}
	equal(t, drain(t, cache, 1), []string{"ADDED a@2", "ADDED b@3"})
	if s := f.Stats(); s.Skipped != 1 {
		t.Errorf("stats %+v, want the replayed event skipped", s)
	}
}

func TestGapTheApiserverCannotReplayRelists(t *testing.T) {
	api := &fakeAPI{}
	e2 := api.add(watch.Added, "a", 2)
	api.add(watch.Added, "b", 3)
	e4 := api.add(watch.Added, "c", 4)
	f, cache := newFeeder(t, api)
	ctx := context.Background()
	if err := f.handle(ctx, msg(t, e2, 1), ""); err != nil {
		t.Fatal(err)
	}
	api.oldest = 4 // compacted past the cache's revision
	if err := f.handle(ctx, msg(t, e4, 3), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Watch(context.Background(), 2, watchcache.Filter{}, false); !apierrors.IsResourceExpired(err) {
		t.Errorf("watch from before the relist: %v, want 410", err)
	}
	objs, rev := cache.List(watchcache.Filter{})
	if len(objs) != 3 || rev != 4 {
		t.Errorf("after the relist: %d objects at %d, want 3 at 4", len(objs), rev)
	}
	if s := f.Stats(); s.Relists != 1 || s.Skipped != 1 {
		t.Errorf("stats %+v, want one relist and the message skipped", s)
	}
}

func TestResetMarkPastTheCacheRelists(t *testing.T) {
	api := &fakeAPI{}
	e2 := api.add(watch.Added, "a", 2)
	api.add(watch.Added, "b", 3)
	f, cache := newFeeder(t, api)
	ctx := context.Background()
	if err := f.handle(ctx, msg(t, e2, 1), ""); err != nil {
		t.Fatal(err)
	}
	api.oldest = 3 // the publisher relisted at 3; the apiserver holds nothing older
	reset := &watchstream.Message{Kind: watchstream.KindReset, Revision: 3, Sequence: 2, Epoch: "e1"}
	if err := f.handle(ctx, reset, ""); err != nil {
		t.Fatal(err)
	}
	if objs, rev := cache.List(watchcache.Filter{}); len(objs) != 2 || rev != 3 {
		t.Errorf("after the reset: %d objects at %d, want 2 at 3", len(objs), rev)
	}
	// Numbers go on after the mark without another fill.
	e4 := api.add(watch.Added, "c", 4)
	if err := f.handle(ctx, msg(t, e4, 3), ""); err != nil {
		t.Fatal(err)
	}
	if s := f.Stats(); s.Relists != 1 || s.Applied != 2 {
		t.Errorf("stats %+v", s)
	}
}

func TestResyncCatchesUpFromTheApiserverBeforeTheCacheIsCurrent(t *testing.T) {
	api := &fakeAPI{}
	e2 := api.add(watch.Added, "a", 2)
	f, cache := newFeeder(t, api)
	ctx := context.Background()
	if err := f.handle(ctx, msg(t, e2, 1), ""); err != nil {
		t.Fatal(err)
	}
	if !f.Current() {
		t.Fatal("a listed cache is not current")
	}
	// NATS goes away; what the apiserver publishes meanwhile is lost.
	f.Resync()
	if f.Current() {
		t.Fatal("current after Resync")
	}
	api.add(watch.Added, "b", 3)
	api.add(watch.Deleted, "a", 4)
	if err := f.catchUp(ctx); err != nil {
		t.Fatal(err)
	}
	equal(t, drain(t, cache, 2), []string{"ADDED b@3", "DELETED a@4"})
	if !f.Current() || cache.Revision() != 4 {
		t.Errorf("after the catch-up: current %v at %d, want current at 4", f.Current(), cache.Revision())
	}
	if s := f.Stats(); s.CatchUps != 1 || s.Filled != 2 || s.Relists != 0 {
		t.Errorf("stats %+v, want one catch-up of 2 events", s)
	}
}
