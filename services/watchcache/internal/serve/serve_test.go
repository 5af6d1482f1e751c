package serve

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/grpcdyn"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	"podline.dev/pkg/watchcache"
	_ "podline.dev/proto/all"
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// upstream answers the current revision, and counts forwarded lists.
type upstream struct {
	rev       int64
	forwarded []*metav1.ListRequest
}

func (u *upstream) List(_ context.Context, opts *metav1.ListRequest) ([]object.Object, *metav1.ListMeta, error) {
	u.forwarded = append(u.forwarded, opts)
	return nil, &metav1.ListMeta{ResourceVersion: strconv.FormatInt(u.rev, 10)}, nil
}

func pod(name, node string, rev int64, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels, ResourceVersion: strconv.FormatInt(rev, 10)},
		Spec:     &corev1.PodSpec{NodeName: node},
	}
}

func serve(t *testing.T, gate Gate) (*client.Client[*corev1.Pod], *watchcache.Cache, *upstream) {
	t.Helper()
	res, _ := apis.ByMessage("podline.core.v1.Pod")
	cache := watchcache.New(watchcache.WithFreshTimeout(200*time.Millisecond), watchcache.WithBookmarkInterval(0))
	cache.Replace([]object.Object{pod("a", "n1", 2, map[string]string{"app": "web"}), pod("b", "n2", 3, nil)}, 3)
	up := &upstream{rev: 3}
	s := grpc.NewServer(grpcdyn.ServerCodec())
	if err := Register(s, []Resource{{Res: res, Cache: cache, Up: up}}, gate); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return client.Pods(conn), cache, up
}

// gate serves until stopped, and records what it admitted.
type gate struct {
	mu       sync.Mutex
	stop     chan struct{}
	down     error // Serving's answer when set
	refuse   error // Admit's answer when set
	admitted []string
}

func newGate() *gate { return &gate{stop: make(chan struct{})} }

func (g *gate) Serving() (<-chan struct{}, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stop, g.down
}

func (g *gate) Admit(_ context.Context, res apis.Resource, verb string, req *metav1.ListRequest) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.admitted = append(g.admitted, verb+" "+res.Name+" "+req.GetFieldSelector())
	return g.refuse
}

func (g *gate) seen() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.admitted...)
}

func (g *gate) refuseWith(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refuse = err
}

// stopServing ends the serving period: open watches end with 503.
func (g *gate) stopServing() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.stop)
	g.down = apierrors.NewServiceUnavailable("watchcache replica not ready: nats disconnected for 2s")
}

func TestListFromTheCacheWithSelectors(t *testing.T) {
	ctx := context.Background()
	pods, _, up := serve(t, newGate())
	for _, tc := range []struct {
		req  *metav1.ListRequest
		want int
	}{
		{&metav1.ListRequest{}, 2},
		{&metav1.ListRequest{ResourceVersion: "0", LabelSelector: "app=web"}, 1},
		{&metav1.ListRequest{ResourceVersion: "3", FieldSelector: "spec.nodeName=n2"}, 1},
		{&metav1.ListRequest{Namespace: "other"}, 0},
	} {
		items, lm, err := pods.List(ctx, tc.req)
		if err != nil {
			t.Fatalf("%v: %v", tc.req, err)
		}
		if len(items) != tc.want || lm.GetResourceVersion() != "3" {
			t.Errorf("%v: %d items at %s, want %d at 3", tc.req, len(items), lm.GetResourceVersion(), tc.want)
		}
	}
	// Only the consistent list asked the apiserver, and only for its revision.
	if len(up.forwarded) != 2 || up.forwarded[0].GetLimit() != 1 {
		t.Errorf("forwarded %v, want two limit=1 revision reads", up.forwarded)
	}
	if _, _, err := pods.List(ctx, &metav1.ListRequest{Limit: 10}); err != nil || len(up.forwarded) != 3 || up.forwarded[2].GetLimit() != 10 {
		t.Errorf("paged list: err %v, forwarded %v; want it forwarded as is", err, up.forwarded)
	}
}

func TestBadRequestsAndWrites(t *testing.T) {
	ctx := context.Background()
	pods, _, _ := serve(t, newGate())
	if _, _, err := pods.List(ctx, &metav1.ListRequest{FieldSelector: "spec.bogus=x"}); !apierrors.IsBadRequest(err) {
		t.Errorf("unknown field selector: %v, want 400", err)
	}
	if _, err := pods.Watch(ctx, &metav1.ListRequest{ResourceVersion: "abc"}); !apierrors.IsBadRequest(err) {
		t.Errorf("bad resourceVersion: %v, want 400", err)
	}
	if _, err := pods.Create(ctx, pod("c", "", 0, nil)); apierrors.ReasonForError(err) != apierrors.ReasonMethodNotAllowed {
		t.Errorf("create on a replica: %v, want 405", err)
	}
}

func TestWatchFromTheCache(t *testing.T) {
	ctx := context.Background()
	pods, cache, _ := serve(t, newGate())
	w, err := pods.Watch(ctx, &metav1.ListRequest{ResourceVersion: "3", FieldSelector: "spec.nodeName=n1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := cache.Apply(watchcache.Event{Type: watch.Added, Object: pod("c", "n2", 4, nil), Revision: 4}); err != nil {
		t.Fatal(err)
	}
	if err := cache.Apply(watchcache.Event{Type: watch.Modified, Object: pod("a", "n1", 5, nil), Revision: 5}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Modified || ev.Object.GetMetadata().GetResourceVersion() != "5" {
			t.Errorf("got %s @%s, want MODIFIED a@5", ev.Type, ev.Object.GetMetadata().GetResourceVersion())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	if _, err := pods.Watch(ctx, &metav1.ListRequest{ResourceVersion: "99"}); !apierrors.IsTimeout(err) {
		t.Errorf("watch from a revision not reached: %v, want 504", err)
	}
}

func TestNotReadyIs503(t *testing.T) {
	ctx := context.Background()
	g := newGate()
	g.stopServing()
	pods, _, _ := serve(t, g)
	if _, _, err := pods.List(ctx, &metav1.ListRequest{}); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("list: %v, want 503", err)
	}
	if _, err := pods.Watch(ctx, &metav1.ListRequest{}); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("watch: %v, want 503", err)
	}
	if seen := g.seen(); len(seen) != 0 {
		t.Errorf("a replica that does not serve authorized %v", seen)
	}
}

func TestOpenWatchesEndWith503WhenTheReplicaStopsServing(t *testing.T) {
	ctx := context.Background()
	g := newGate()
	pods, cache, _ := serve(t, g)
	w, err := pods.Watch(ctx, &metav1.ListRequest{ResourceVersion: "3"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := cache.Apply(watchcache.Event{Type: watch.Added, Object: pod("c", "n2", 4, nil), Revision: 4}); err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); ev.Type != watch.Added {
		t.Fatalf("got %s, want ADDED c", ev.Type)
	}
	g.stopServing()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok || ev.Type != watch.Error || !apierrors.IsServiceUnavailable(ev.Err) {
			t.Fatalf("got %v %s %v, want an ERROR event with 503", ok, ev.Type, ev.Err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the watch stayed open on a replica that stopped serving")
	}
	if _, ok := <-w.ResultChan(); ok {
		t.Error("the watch sent more after its error")
	}
}

func TestEveryReadIsAuthorizedWithItsVerbAndSelector(t *testing.T) {
	ctx := context.Background()
	g := newGate()
	pods, _, _ := serve(t, g)
	if _, _, err := pods.List(ctx, &metav1.ListRequest{FieldSelector: "spec.nodeName=n1"}); err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, &metav1.ListRequest{ResourceVersion: "3", FieldSelector: "spec.nodeName=n2"})
	if err != nil {
		t.Fatal(err)
	}
	w.Stop()
	want := []string{"list pods spec.nodeName=n1", "watch pods spec.nodeName=n2"}
	if seen := g.seen(); len(seen) != 2 || seen[0] != want[0] || seen[1] != want[1] {
		t.Errorf("admitted %q, want %q", seen, want)
	}
	g.refuseWith(apierrors.NewForbidden(apierrors.GroupResource{Resource: "pods"}, "", `User "jane" cannot watch resource "pods" in API group "" at the cluster scope`))
	if _, err := pods.Watch(ctx, &metav1.ListRequest{}); !apierrors.IsForbidden(err) {
		t.Errorf("refused watch: %v, want 403", err)
	}
}

func TestBookmarksCarryTheRevisionAndTheKind(t *testing.T) {
	ctx := context.Background()
	pods, cache, _ := serve(t, newGate())
	w, err := pods.Watch(ctx, &metav1.ListRequest{ResourceVersion: "3", AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cache.Progress(10) // a progress mark from the stream
	select {
	case ev := <-w.ResultChan():
		p, _ := ev.Object.(*corev1.Pod)
		if ev.Type != watch.Bookmark || p.GetMetadata().GetResourceVersion() != "10" || p.GetApiVersion() != "v1" || p.GetKind() != "Pod" {
			t.Errorf("got %s %v, want a BOOKMARK v1/Pod at 10", ev.Type, ev.Object)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no bookmark")
	}
}
