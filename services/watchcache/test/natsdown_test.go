package test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"podline.dev/pkg/client"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/watchcache/internal/replica"
)

// recorder is an informer's store that keeps the order of what its
// reflector applied.
type recorder struct {
	mu       sync.Mutex
	events   []string
	replaces int
}

func (r *recorder) add(typ watch.EventType, obj object.Object) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, string(typ)+" "+obj.GetMetadata().GetName()+"@"+obj.GetMetadata().GetResourceVersion())
	return nil
}

func (r *recorder) Add(obj object.Object) error    { return r.add(watch.Added, obj) }
func (r *recorder) Update(obj object.Object) error { return r.add(watch.Modified, obj) }
func (r *recorder) Delete(obj object.Object) error { return r.add(watch.Deleted, obj) }
func (r *recorder) Resync() error                  { return nil }

func (r *recorder) Replace([]object.Object, string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.replaces++
	return nil
}

func (r *recorder) seen() ([]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...), r.replaces
}

// eventually polls cond every 20 ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func createPods(t *testing.T, ctx context.Context, pods *client.Client[*corev1.Pod], prefix string, n int) {
	t.Helper()
	for i := range n {
		if _, err := pods.Create(ctx, pod(prefix+"-"+strconv.Itoa(i), nil)); err != nil {
			t.Fatal(err)
		}
	}
}

// With NATS stopped mid-stream, the replica ends its watches with 503 and
// reports not ready (readyz, grpc.health.v1, which the client's
// connection checks), and an informer's reflector
// watching through client.WithWatchEndpoint goes on from the apiserver;
// with NATS back the replica catches up, serves again, and the reflector
// returns to it. The reflector sees every event the apiserver's own watch
// sees, in order, once, and never relists.
func TestNATSDownClientsFallBackToTheApiserverAndReturn(t *testing.T) {
	ctx := ctxFor(t)
	n := startNATS(t)
	api := apiservertest.Start(t, apiservertest.WithNATS(n.URL))
	rep := startReplicaWith(t, n.URL, api, replica.Config{NATSGrace: 300 * time.Millisecond})
	// Dialed as components dial it: round robin over healthy replicas.
	endpoint, err := client.DialWatchEndpoint(rep.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer endpoint.Close()
	split := client.WithWatchEndpoint(api.Conn, endpoint, client.WithReturnBackoff(200*time.Millisecond, time.Second))
	direct := client.Pods(api.Conn)
	health := healthpb.NewHealthClient(rep.Conn)
	readyz := httptest.NewServer(rep.HealthHandler())
	defer readyz.Close()
	serving := func() (healthpb.HealthCheckResponse_ServingStatus, int) {
		st, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(readyz.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return st.GetStatus(), resp.StatusCode
	}
	replicaWatchers := func() int64 {
		_, m, _ := rep.Stats("pods")
		return int64(m.Watchers)
	}

	rec := &recorder{}
	refl := cache.NewReflector(&client.ListWatch[*corev1.Pod]{Client: client.Pods(split)}, rec,
		cache.WithBackoff(cache.Backoff{Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond, Factor: 2}))
	rctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	wg.Go(func() { refl.Run(rctx) })
	eventually(t, 30*time.Second, "the reflector watches through the replica", func() bool { return replicaWatchers() > 0 })
	wd, err := direct.Watch(ctx, &metav1.ListRequest{ResourceVersion: refl.LastSyncResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer wd.Stop()
	const perPhase = 15
	want := reading(t, wd, 3*perPhase)
	seenAll := func(k int) func() bool {
		return func() bool { evs, _ := rec.seen(); return len(evs) >= k }
	}

	createPods(t, ctx, direct, "before", perPhase)
	eventually(t, 30*time.Second, "the first events reached the reflector", seenAll(perPhase))

	n.stop()
	eventually(t, 10*time.Second, "the replica stops serving without NATS (health NOT_SERVING, readyz 503)", func() bool {
		st, code := serving()
		return st == healthpb.HealthCheckResponse_NOT_SERVING && code == http.StatusServiceUnavailable
	})
	eventually(t, 10*time.Second, "the replica ended its watch", func() bool { return replicaWatchers() == 0 })
	lctx, lcancel := context.WithTimeout(ctx, 10*time.Second)
	_, _, err = client.Pods(endpoint).List(lctx, &metav1.ListRequest{})
	lcancel()
	if status.Code(err) != codes.Unavailable {
		t.Errorf("a list on the replicas without NATS: %v, want Unavailable at once", err)
	}
	createPods(t, ctx, direct, "down", perPhase)
	eventually(t, 30*time.Second, "the events made while NATS is down reached the reflector (from the apiserver)", seenAll(2*perPhase))
	if w := replicaWatchers(); w != 0 {
		t.Errorf("a replica without NATS has %d watchers", w)
	}

	n.start(t)
	eventually(t, 30*time.Second, "the replica serves again with NATS back (health SERVING, readyz 200)", func() bool {
		st, code := serving()
		return st == healthpb.HealthCheckResponse_SERVING && code == http.StatusOK
	})
	eventually(t, 30*time.Second, "the reflector came back to the replica", func() bool { return replicaWatchers() > 0 })
	createPods(t, ctx, direct, "after", perPhase)
	eventually(t, 30*time.Second, "the last events reached the reflector", seenAll(3*perPhase))

	got, replaces := rec.seen()
	wantEvents := want()
	if len(got) != len(wantEvents) {
		t.Fatalf("the reflector applied %d events, the apiserver's watch has %d:\n%v", len(got), len(wantEvents), got)
	}
	for i, ev := range wantEvents {
		if w := string(ev.Type) + " " + ev.Object.GetMetadata().GetName() + "@" + rvOf(ev); got[i] != w {
			t.Fatalf("event %d: the reflector applied %s, the apiserver's watch has %s", i, got[i], w)
		}
	}
	if replaces != 1 {
		t.Errorf("the reflector listed %d times, want once: every watch resumed from its last resourceVersion", replaces)
	}
	stats, _, _ := rep.Stats("pods")
	t.Logf("replica after the outage: %+v", stats)
	if stats.CatchUps == 0 {
		t.Error("the replica served again without catching up")
	}
}
