package test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/client"
	"podline.dev/pkg/watch"
	"podline.dev/pkg/watchcache"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/watchcache/internal/feed"
	"podline.dev/services/watchcache/internal/replica"
)

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// runningReplica is a replica serving gRPC on Addr.
type runningReplica struct {
	*replica.Replica
	Addr string
	Conn *grpc.ClientConn
	stop func()
}

// startReplica runs a replica in-process until stop or the test ends.
func startReplica(t *testing.T, natsURL string, api *apiservertest.Server, opts ...watchcache.Option) *runningReplica {
	t.Helper()
	return startReplicaWith(t, natsURL, api, replica.Config{WatchCache: opts})
}

// startReplicaWith runs a replica of cfg, with natsURL, api and short
// timers filled in.
func startReplicaWith(t *testing.T, natsURL string, api *apiservertest.Server, cfg replica.Config) *runningReplica {
	t.Helper()
	cfg.NATSURL, cfg.Apiserver, cfg.Name = natsURL, api.Conn, t.Name()
	cfg.Feed = append([]feed.Option{feed.WithFirstWait(500 * time.Millisecond)}, cfg.Feed...)
	r, err := replica.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { r.Run(ctx) })
	wg.Go(func() { _ = r.ServeGRPC(ctx, lis) })
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { _ = conn.Close(); cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := r.WaitReady(wctx); err != nil {
		t.Fatalf("replica not ready: %v", err)
	}
	return &runningReplica{Replica: r, Addr: lis.Addr().String(), Conn: conn, stop: stop}
}

func pod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
		Spec:     &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: "registry.podline:5000/demo/web:1.0"}}},
	}
}

// churn makes n changes to pods: creates, then label updates, then
// deletes, from 8 writers. It returns when all are written, or the first
// error.
func churn(ctx context.Context, pods *client.Client[*corev1.Pod], prefix string, n int) error {
	// Every object is created; a third of n are updates and a third deletes.
	objs, changes := n-2*(n/3), n/3
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	step := func(f func(i int) error, count int) {
		next := make(chan int)
		for range 8 {
			wg.Go(func() {
				for i := range next {
					if err := f(i); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		for i := range count {
			next <- i
		}
		close(next)
		wg.Wait()
	}
	name := func(i int) string { return fmt.Sprintf("%s-%04d", prefix, i) }
	step(func(i int) error {
		_, err := pods.Create(ctx, pod(name(i), map[string]string{"app": "web"}))
		return err
	}, objs)
	step(func(i int) error {
		p, err := pods.Get(ctx, "default", name(i))
		if err != nil {
			return err
		}
		p.Metadata.Labels["step"] = "2"
		_, err = pods.Update(ctx, p)
		return err
	}, changes)
	step(func(i int) error {
		_, err := pods.Delete(ctx, "default", name(i), nil)
		return err
	}, changes)
	select {
	case err := <-errs:
		return fmt.Errorf("write: %w", err)
	default:
		return nil
	}
}

// collect reads n non-bookmark events or fails.
func collect(t *testing.T, w watch.Interface, n int, timeout time.Duration) []watch.Event {
	t.Helper()
	evs, err := read(w, n, timeout)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// collectResuming reads n events from a watch on pods from rv, watching
// again from the last event's resourceVersion when the server ends the
// watch cleanly, as a reflector does: what the events must show is that,
// across such ends, nothing is missed or repeated.
func collectResuming(t *testing.T, pods *client.Client[*corev1.Pod], rv string, n int) []watch.Event {
	t.Helper()
	var out []watch.Event
	for resumes := 0; len(out) < n; resumes++ {
		if resumes > 5 {
			t.Fatalf("watch ended %d times; %d of %d events", resumes, len(out), n)
		}
		w, err := pods.Watch(context.Background(), &metav1.ListRequest{ResourceVersion: rv})
		if err != nil {
			t.Fatalf("watch from %s: %v", rv, err)
		}
		evs, err := read(w, n-len(out), time.Minute)
		w.Stop()
		out = append(out, evs...)
		if len(evs) > 0 {
			rv = rvOf(evs[len(evs)-1])
		}
		if err != nil && !errors.Is(err, errWatchClosed) {
			t.Fatal(err)
		}
		if err != nil {
			t.Logf("the watch ended after %d events; watching again from %s", len(out), rv)
		}
	}
	return out
}

// errWatchClosed is read's error for a watch the server ended cleanly.
var errWatchClosed = errors.New("watch closed")

// read reads n non-bookmark events.
func read(w watch.Interface, n int, timeout time.Duration) ([]watch.Event, error) {
	out := make([]watch.Event, 0, n)
	deadline := time.After(timeout)
	for len(out) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return out, fmt.Errorf("%w after %d of %d events", errWatchClosed, len(out), n)
			}
			if ev.Type == watch.Error {
				return out, fmt.Errorf("watch error after %d events: %v", len(out), ev.Err)
			}
			if ev.Type != watch.Bookmark {
				out = append(out, ev)
			}
		case <-deadline:
			return out, fmt.Errorf("got %d of %d events", len(out), n)
		}
	}
	return out, nil
}

// reading reads n events of w in the background, as a client does, and
// returns them when asked.
func reading(t *testing.T, w watch.Interface, n int) func() []watch.Event {
	type result struct {
		evs []watch.Event
		err error
	}
	ch := make(chan result, 1)
	go func() {
		evs, err := read(w, n, 2*time.Minute)
		ch <- result{evs, err}
	}()
	return func() []watch.Event {
		t.Helper()
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.evs
	}
}

// sameEvents fails unless a and b are the same events in the same order.
func sameEvents(t *testing.T, got, want []watch.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Type != want[i].Type || !proto.Equal(got[i].Object, want[i].Object) {
			t.Fatalf("event %d: got %s %s@%s, want %s %s@%s", i,
				got[i].Type, got[i].Object.GetMetadata().GetName(), got[i].Object.GetMetadata().GetResourceVersion(),
				want[i].Type, want[i].Object.GetMetadata().GetName(), want[i].Object.GetMetadata().GetResourceVersion())
		}
	}
}

func rvOf(ev watch.Event) string { return ev.Object.GetMetadata().GetResourceVersion() }

func listRV(t *testing.T, ctx context.Context, pods *client.Client[*corev1.Pod]) string {
	t.Helper()
	_, lm, err := pods.List(ctx, &metav1.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strconv.ParseInt(lm.GetResourceVersion(), 10, 64); err != nil {
		t.Fatal(err)
	}
	return lm.GetResourceVersion()
}
