package test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/watch"
	"podline.dev/pkg/watchcache"
	"podline.dev/pkg/watchstream"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
)

func TestThousandEventsThroughTheCacheMatchADirectWatch(t *testing.T) {
	ctx := ctxFor(t)
	n := startNATS(t)
	api := apiservertest.Start(t, apiservertest.WithNATS(n.URL))
	rep := startReplica(t, n.URL, api)
	direct, cached := client.Pods(api.Conn), client.Pods(rep.Conn)
	from := listRV(t, ctx, direct)

	wd, err := direct.Watch(ctx, &metav1.ListRequest{ResourceVersion: from})
	if err != nil {
		t.Fatal(err)
	}
	defer wd.Stop()
	wc, err := cached.Watch(ctx, &metav1.ListRequest{ResourceVersion: from, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Stop()
	// A watch with a selector sees only what matches, through the cache too.
	sel := &metav1.ListRequest{ResourceVersion: from, LabelSelector: "step=2", FieldSelector: "metadata.namespace=default"}
	wds, err := direct.Watch(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	defer wds.Stop()
	wcs, err := cached.Watch(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	defer wcs.Stop()

	const events = 1000
	want, got := reading(t, wd, events), reading(t, wc, events)
	// 333 updates make objects match (ADDED); the 333 deletes are of those.
	wantSel, gotSel := reading(t, wds, 666), reading(t, wcs, 666)
	if err := churn(ctx, direct, "m", events); err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got(), want())
	sameEvents(t, gotSel(), wantSel())

	// A list through the cache is the apiserver's list.
	items, lm, err := cached.List(ctx, &metav1.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ditems, dlm, err := direct.List(ctx, &metav1.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != len(ditems) {
		t.Errorf("cached list has %d pods at %s, direct %d at %s", len(items), lm.GetResourceVersion(), len(ditems), dlm.GetResourceVersion())
	}
	stats, m, _ := rep.Stats("pods")
	t.Logf("replica: %+v; cache: %d watchers, %d events fanned out", stats, m.Watchers, m.EventsQueued)
	if stats.Applied < events {
		t.Errorf("replica applied %d events from NATS, want at least %d", stats.Applied, events)
	}
}

func TestReplicaRestartedMidStreamResumesWithNothingMissedOrRepeated(t *testing.T) {
	ctx := ctxFor(t)
	n := startNATS(t)
	api := apiservertest.Start(t, apiservertest.WithNATS(n.URL))
	direct := client.Pods(api.Conn)
	from := listRV(t, ctx, direct)
	wd, err := direct.Watch(ctx, &metav1.ListRequest{ResourceVersion: from})
	if err != nil {
		t.Fatal(err)
	}
	defer wd.Stop()

	const events = 600
	want := reading(t, wd, events)
	rep := startReplica(t, n.URL, api)
	w, err := client.Pods(rep.Conn).Watch(ctx, &metav1.ListRequest{ResourceVersion: from})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- churn(ctx, direct, "r", events/2) }()
	got := collect(t, w, 150, time.Minute)
	rep.stop() // the replica dies mid-stream; its watchers' streams end
	for range w.ResultChan() {
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Half the writes happen while no replica runs.
	if err := churn(ctx, direct, "s", events/2); err != nil {
		t.Fatal(err)
	}

	rep2 := startReplica(t, n.URL, api)
	got = append(got, collectResuming(t, client.Pods(rep2.Conn), rvOf(got[len(got)-1]), events-len(got))...)
	sameEvents(t, got, want())
}

func TestSequenceGapIsFilledFromTheApiserver(t *testing.T) {
	ctx := ctxFor(t)
	n := startNATS(t)
	api := apiservertest.Start(t, apiservertest.WithNATS(n.URL))
	direct := client.Pods(api.Conn)
	from := listRV(t, ctx, direct)
	wd, err := direct.Watch(ctx, &metav1.ListRequest{ResourceVersion: from})
	if err != nil {
		t.Fatal(err)
	}
	defer wd.Stop()
	const events = 90
	wantLater := reading(t, wd, events)
	if err := churn(ctx, direct, "g", events); err != nil {
		t.Fatal(err)
	}
	want := wantLater()

	// Take three events out of the middle of the stream: the replica must
	// notice the gap in the publisher's numbers and fill it.
	deleteStreamMessages(t, ctx, n.URL, want[40:43])

	rep := startReplica(t, n.URL, api)
	w, err := client.Pods(rep.Conn).Watch(ctx, &metav1.ListRequest{ResourceVersion: from})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	sameEvents(t, collect(t, w, events, time.Minute), want)
	if stats, _, _ := rep.Stats("pods"); stats.Fills == 0 || stats.Filled < 3 {
		t.Errorf("replica stats %+v: want a fill of at least 3 events", stats)
	}
}

// deleteStreamMessages removes from the stream the messages of the events
// at the given revisions.
func deleteStreamMessages(t *testing.T, ctx context.Context, url string, evs []watch.Event) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, watchstream.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	revs := map[int64]bool{}
	for _, ev := range evs {
		rv, _ := strconv.ParseInt(rvOf(ev), 10, 64)
		revs[rv] = true
	}
	pods, _ := apis.ByMessage("podline.core.v1.Pod")
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{watchstream.ResourceFilter(pods)}})
	if err != nil {
		t.Fatal(err)
	}
	deleted := 0
	for deleted < len(revs) {
		msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatalf("reading the stream: %v (deleted %d)", err, deleted)
		}
		var m watchstream.Message
		if err := m.Unmarshal(msg.Data()); err != nil {
			t.Fatal(err)
		}
		if m.Kind == watchstream.KindEvent && revs[m.Revision] {
			meta, _ := msg.Metadata()
			if err := stream.DeleteMsg(ctx, meta.Sequence.Stream); err != nil {
				t.Fatal(err)
			}
			deleted++
		}
	}
}

func TestTooOldRevisionIsGoneAndNewerOneIsWaitedFor(t *testing.T) {
	ctx := ctxFor(t)
	n := startNATS(t)
	api := apiservertest.Start(t, apiservertest.WithNATS(n.URL))
	direct := client.Pods(api.Conn)
	from := listRV(t, ctx, direct)
	rep := startReplica(t, n.URL, api, watchcache.WithCapacity(50), watchcache.WithFreshTimeout(time.Second))
	cached := client.Pods(rep.Conn)
	if err := churn(ctx, direct, "o", 90); err != nil {
		t.Fatal(err)
	}
	now := listRV(t, ctx, direct)
	if _, _, err := cached.List(ctx, &metav1.ListRequest{ResourceVersion: now}); err != nil {
		t.Fatalf("list at the current revision through the cache: %v", err)
	}

	_, err := cached.Watch(ctx, &metav1.ListRequest{ResourceVersion: from})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("watch from %s past a 50-event window: err = %v, want 410 Expired", from, err)
	}
	if se, ok := err.(*apierrors.StatusError); !ok || se.ErrStatus.GetCode() != 410 {
		t.Errorf("err = %#v, want a Status with code 410", err)
	}

	ahead, _ := strconv.ParseInt(now, 10, 64)
	start := time.Now()
	_, err = cached.Watch(ctx, &metav1.ListRequest{ResourceVersion: strconv.FormatInt(ahead+1000, 10)})
	if !apierrors.IsTimeout(err) {
		t.Fatalf("watch from a revision the cache has not seen: err = %v, want 504 Timeout", err)
	}
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Errorf("answered after %v, want a wait of the fresh timeout (1s)", waited)
	}
}
