package compat

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("resourceVersion %q is not a number", s)
	}
	return n
}

// nextEvent reads one event or fails after a timeout.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return watch.Event{}
}

// A watch from a list's resourceVersion sees what happens after it, as
// typed objects, filtered by the label selector, with bookmarks on request.
func TestWatchFromListSeesChangesInOrder(t *testing.T) {
	ctx := ctxFor(t)
	_, cs := start(t)
	pods := cs.CoreV1().Pods(metav1.NamespaceDefault)
	if _, err := pods.Create(ctx, makePod("before").label("app", "web").obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, LabelSelector: "app=web"})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()

	if _, err := pods.Create(ctx, makePod("other").label("app", "db").obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created, err := pods.Create(ctx, makePod("web").label("app", "web").obj(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A pod's nodeName is set once, through pods/binding, as the scheduler does.
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
	if err := pods.Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	updated, err := pods.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A bound Pod's delete is graceful (it gets a deletionTimestamp and
	// waits for its kubelet); a zero grace period removes it at once.
	if err := pods.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "web", *metav1.NewDeleteOptions(0)); err != nil {
		t.Fatal(err)
	}

	want := []struct {
		typ      watch.EventType
		node     string
		deleting bool
	}{{watch.Added, "", false}, {watch.Modified, "node-1", false}, {watch.Modified, "node-1", true}, {watch.Deleted, "node-1", true}}
	lastRV := 0
	for _, w8 := range want {
		ev := nextEvent(t, w)
		p, ok := ev.Object.(*corev1.Pod)
		if !ok {
			t.Fatalf("%s event carries %T", ev.Type, ev.Object)
		}
		if ev.Type != w8.typ || p.Name != "web" || p.Spec.NodeName != w8.node || p.UID != created.UID || (p.DeletionTimestamp != nil) != w8.deleting {
			t.Fatalf("got %s %s node %q deletionTimestamp %v, want %s web node %q deleting %v",
				ev.Type, p.Name, p.Spec.NodeName, p.DeletionTimestamp, w8.typ, w8.node, w8.deleting)
		}
		rv, err := strconv.Atoi(p.ResourceVersion)
		if err != nil || rv <= lastRV {
			t.Fatalf("resourceVersion %q after %d", p.ResourceVersion, lastRV)
		}
		lastRV = rv
		if ev.Type == watch.Modified && !w8.deleting && p.ResourceVersion != updated.ResourceVersion {
			t.Fatalf("modified at %s, update returned %s", p.ResourceVersion, updated.ResourceVersion)
		}
	}

	// A watcher that has seen nothing for a while, while the resource moved
	// on, gets a bookmark: only the resourceVersion, in an object of the
	// watched kind.
	bw, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.Itoa(lastRV), LabelSelector: "app=web", AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bw.Stop()
	unseen, err := pods.Create(ctx, makePod("unseen").label("app", "db").obj(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, bw)
	p, ok := ev.Object.(*corev1.Pod)
	if ev.Type != watch.Bookmark || !ok || p.Name != "" {
		t.Fatalf("bookmark: %s %#v", ev.Type, ev.Object)
	}
	if rv, err := strconv.Atoi(p.ResourceVersion); err != nil || rv < atoi(t, unseen.ResourceVersion) {
		t.Fatalf("bookmark at %q, before %s", p.ResourceVersion, unseen.ResourceVersion)
	}
}

// A watch from a resourceVersion that etcd compacted away and the watch
// cache no longer holds is 410 Gone: Expired for client-go, which then
// relists.
func TestWatchFromCompactedResourceVersionIsGone(t *testing.T) {
	ctx := ctxFor(t)
	s, cs := start(t)
	pods := cs.CoreV1().Pods(metav1.NamespaceDefault)
	first, err := pods.Create(ctx, makePod("web").obj(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rev := pushOutOfWatchCache(t, cs)

	// etcd forgets everything before the last write.
	if _, err := s.Etcd.Client.Compact(ctx, rev); err != nil {
		t.Fatalf("compact at %d: %v", rev, err)
	}

	// The cache applies etcd's events asynchronously: once it has caught
	// up, the first revision has left its window.
	var gone error
	eventually(t, 10*time.Second, func() error {
		gone = watchGone(ctx, cs, first.ResourceVersion)
		if apierrors.IsResourceExpired(gone) || apierrors.IsGone(gone) {
			return nil
		}
		return gone
	})
	if !strings.HasPrefix(gone.Error(), "too old resource version: "+first.ResourceVersion) {
		t.Fatalf("watch from a compacted revision: %v", gone)
	}

	// A list at the compacted revision is gone as well.
	_, err = pods.List(ctx, metav1.ListOptions{ResourceVersion: first.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("list at a compacted revision: %v", err)
	}
	// A watch from the compaction's revision goes on as usual.
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatInt(rev, 10)})
	if err != nil {
		t.Fatalf("watch from the last revision: %v", err)
	}
	defer w.Stop()
	if _, err := pods.Create(ctx, makePod("after").obj(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, w); ev.Type != watch.Added || ev.Object.(*corev1.Pod).Name != "after" {
		t.Fatalf("after compaction: %s %v", ev.Type, ev.Object)
	}
}

// pushOutOfWatchCache writes Pods more times than the watch cache keeps
// events for (1024 per resource), from several clients at once as
// controllers would, and returns the highest resourceVersion written.
func pushOutOfWatchCache(t *testing.T, cs kubernetes.Interface) int64 {
	t.Helper()
	ctx := ctxFor(t)
	const workers, updates = 8, 140
	pods := cs.CoreV1().Pods(metav1.NamespaceDefault)
	revs := make([]int64, workers)
	errs := make(chan error, workers)
	for n := range workers {
		go func() {
			p, err := pods.Create(ctx, makePod(fmt.Sprintf("churn-%d", n)).obj(), metav1.CreateOptions{})
			for i := 0; err == nil && i < updates; i++ {
				p.Labels = map[string]string{"i": strconv.Itoa(i)}
				p, err = pods.Update(ctx, p, metav1.UpdateOptions{})
			}
			if err == nil {
				revs[n], err = strconv.ParseInt(p.ResourceVersion, 10, 64)
			}
			errs <- err
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatalf("churn: %v", err)
		}
	}
	return slices.Max(revs)
}

// watchGone opens a watch from rv and returns how it was refused: the
// error of the Watch call, or the Status of an ERROR event (kube-apiserver's
// watch cache answers a too old resourceVersion with 200 and an ERROR event
// carrying 410 Expired).
func watchGone(ctx context.Context, cs kubernetes.Interface, rv string) error {
	w, err := cs.CoreV1().Pods(metav1.NamespaceDefault).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		return err
	}
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			return errClosed
		}
		if ev.Type != watch.Error {
			return &unexpectedEvent{ev}
		}
		return apierrors.FromObject(ev.Object)
	case <-time.After(2 * time.Second):
		return errNoEvent
	}
}
