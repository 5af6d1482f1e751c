package test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/storage"
)

func rvOf(t *testing.T, o object.Object) int64 {
	t.Helper()
	n, err := strconv.ParseInt(o.GetMetadata().GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWatchFromListSeesEveryLaterWriteInOrder(t *testing.T) {
	ctx := ctxFor(t)
	_, pods := startServer(t)
	_, lm, err := pods.List(ctx, &metav1.ListRequest{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := pods.Watch(ctx, &metav1.ListRequest{Namespace: "default", ResourceVersion: lm.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var acked []int64
	for i := range 100 {
		p, err := pods.Create(ctx, pod(fmt.Sprintf("p-%03d", i), nil))
		if err != nil {
			t.Fatal(err)
		}
		acked = append(acked, rvOf(t, p))
	}
	for i, want := range acked {
		ev := next(t, w)
		if ev.Type != watch.Added || rvOf(t, ev.Object) != want {
			t.Fatalf("event %d: %s rv %d, want ADDED rv %d", i, ev.Type, rvOf(t, ev.Object), want)
		}
	}
}

func TestWatchResumedFromLastSeenMissesNothingAndRepeatsNothing(t *testing.T) {
	ctx := ctxFor(t)
	_, pods := startServer(t)
	_, lm, _ := pods.List(ctx, &metav1.ListRequest{})
	w, err := pods.Watch(ctx, &metav1.ListRequest{ResourceVersion: lm.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	var acked []int64
	create := func(i int) {
		p, err := pods.Create(ctx, pod(fmt.Sprintf("p-%03d", i), nil))
		if err != nil {
			t.Fatal(err)
		}
		acked = append(acked, rvOf(t, p))
	}
	for i := range 10 {
		create(i)
	}
	var seen []int64
	for range 5 {
		seen = append(seen, rvOf(t, next(t, w).Object))
	}
	w.Stop() // the stream drops with 5 events unread
	for i := 10; i < 20; i++ {
		create(i)
	}
	w2, err := pods.Watch(ctx, &metav1.ListRequest{ResourceVersion: strconv.FormatInt(seen[len(seen)-1], 10)})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	for len(seen) < len(acked) {
		seen = append(seen, rvOf(t, next(t, w2).Object))
	}
	for i := range acked {
		if seen[i] != acked[i] {
			t.Fatalf("event %d: rv %d, want %d (seen %v)", i, seen[i], acked[i], seen)
		}
	}
}

func TestCompactedRevisionIsGone(t *testing.T) {
	ctx := ctxFor(t)
	s, pods := startServer(t)
	first, _ := pods.Create(ctx, pod("a", nil))
	// Push the first revision out of the watch cache's window and compact etcd.
	for i := range 1100 {
		p := object.Copy(first)
		p.Metadata.ResourceVersion = ""
		p.Metadata.Labels = map[string]string{"i": strconv.Itoa(i)}
		if _, err := pods.Update(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := storage.NewCompactor(s.Etcd.Client, 0).CompactNow(ctx); err != nil {
		t.Fatal(err)
	}
	// The cache applies etcd's events asynchronously: once it has caught up,
	// the first revision has left its window.
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var w watch.Interface
		w, err = pods.Watch(ctx, &metav1.ListRequest{ResourceVersion: first.GetMetadata().GetResourceVersion()})
		if err != nil {
			break
		}
		w.Stop()
	}
	if !apierrors.IsResourceExpired(err) || !strings.HasPrefix(err.Error(), "too old resource version: ") {
		t.Fatalf("watch from compacted revision: %v", err)
	}
	_, _, err = pods.List(ctx, &metav1.ListRequest{ResourceVersion: first.GetMetadata().GetResourceVersion(), ResourceVersionMatch: "Exact"})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("list at compacted revision: %v", err)
	}
}

func TestContinueTokenOfACompactedListIsGone(t *testing.T) {
	ctx := ctxFor(t)
	s, pods := startServer(t)
	for i := range 5 {
		if _, err := pods.Create(ctx, pod(fmt.Sprintf("p-%d", i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	page, lm, err := pods.List(ctx, &metav1.ListRequest{Namespace: "default", Limit: 2})
	if err != nil || len(page) != 2 || lm.GetContinue() == "" || lm.GetRemainingItemCount() != 3 {
		t.Fatalf("first page: %d items, meta %v, err %v", len(page), lm, err)
	}
	rest, lm2, err := pods.List(ctx, &metav1.ListRequest{Namespace: "default", Limit: 10, Continue: lm.GetContinue()})
	if err != nil || len(rest) != 3 || lm2.GetContinue() != "" || lm2.GetResourceVersion() != lm.GetResourceVersion() {
		t.Fatalf("second page: %d items, meta %v, err %v", len(rest), lm2, err)
	}
	if _, err := pods.Create(ctx, pod("late", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.NewCompactor(s.Etcd.Client, 0).CompactNow(ctx); err != nil {
		t.Fatal(err)
	}
	_, _, err = pods.List(ctx, &metav1.ListRequest{Namespace: "default", Limit: 2, Continue: lm.GetContinue()})
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("continue after compaction: %v", err)
	}
}

func TestSelectorsOnListAndWatch(t *testing.T) {
	ctx := ctxFor(t)
	_, pods := startServer(t)
	a := pod("a", map[string]string{"app": "web"})
	a.Spec.NodeName = "worker-1"
	b := pod("b", map[string]string{"app": "db"})
	for _, p := range []*corev1.Pod{a, b} {
		if _, err := pods.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	items, _, err := pods.List(ctx, &metav1.ListRequest{LabelSelector: "app in (web)"})
	if err != nil || len(items) != 1 || items[0].GetMetadata().GetName() != "a" {
		t.Fatalf("label selector: %v %v", names(items), err)
	}
	items, _, err = pods.List(ctx, &metav1.ListRequest{FieldSelector: "spec.nodeName=worker-1"})
	if err != nil || len(items) != 1 || items[0].GetMetadata().GetName() != "a" {
		t.Fatalf("field selector: %v %v", names(items), err)
	}
	if _, _, err := pods.List(ctx, &metav1.ListRequest{FieldSelector: "spec.image=x"}); !apierrors.IsBadRequest(err) {
		t.Fatalf("unsupported field: %v", err)
	}
	// Leaving the selector is a DELETED to that watcher; entering it an ADDED.
	w, err := pods.Watch(ctx, &metav1.ListRequest{LabelSelector: "app=web", ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.GetMetadata().GetName() != "a" {
		t.Fatalf("initial: %s %s", ev.Type, ev.Object.GetMetadata().GetName())
	}
	cur, _ := pods.Get(ctx, "default", "a")
	cur.Metadata.Labels["app"] = "other"
	if _, err := pods.Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != watch.Deleted {
		t.Fatalf("leaving the selector gave %s", ev.Type)
	}
	curB, _ := pods.Get(ctx, "default", "b")
	curB.Metadata.Labels["app"] = "web"
	if _, err := pods.Update(ctx, curB); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, w); ev.Type != watch.Added || ev.Object.GetMetadata().GetName() != "b" {
		t.Fatalf("entering the selector gave %s", ev.Type)
	}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.GetMetadata().GetName())
	}
	return out
}

func TestBookmarksWhenAsked(t *testing.T) {
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	_, pods := startServer(t)
	p, _ := pods.Create(ctx, pod("a", nil))
	w, err := pods.Watch(ctx, &metav1.ListRequest{Namespace: "default", ResourceVersion: p.GetMetadata().GetResourceVersion(), AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// A write outside the watched namespace moves the revision without an
	// event for this watcher, which then gets a bookmark.
	ns := pod("b", nil)
	ns.Metadata.Namespace = "kube-system"
	if _, err := pods.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for {
		ev := next(t, w)
		if ev.Type == watch.Bookmark {
			if b := ev.Object.(*corev1.Pod); b.GetKind() != "Pod" || b.GetApiVersion() != "v1" {
				t.Fatalf("bookmark type meta %q %q", b.GetApiVersion(), b.GetKind())
			}
			if rvOf(t, ev.Object) <= rvOf(t, p) {
				t.Fatalf("bookmark rv %d not past %d", rvOf(t, ev.Object), rvOf(t, p))
			}
			return
		}
	}
}
