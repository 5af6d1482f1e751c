package cache

import (
	"context"
	"testing"

	"podline.dev/pkg/client/cache/cachetest"
	corev1 "podline.dev/proto/core/v1"
)

func TestFactoryReturnsOneInformerPerResource(t *testing.T) {
	f := NewSharedInformerFactory(0, WithInformerLogger(quiet))
	pods := cachetest.NewSource(&corev1.Pod{})
	calls := 0
	newLW := func() ListerWatcher { calls++; return pods }

	first := f.ForResource("pods", newLW, &corev1.Pod{})
	second := f.ForResource("pods", newLW, &corev1.Pod{})
	if first != second {
		t.Fatal("two informers for one resource")
	}
	if calls != 1 {
		t.Fatalf("newLW called %d times, want once", calls)
	}
	nodes := f.ForResource("nodes", func() ListerWatcher { return cachetest.NewSource(&corev1.Node{}) }, &corev1.Node{})
	if nodes == first {
		t.Fatal("one informer for two resources")
	}

	defer func() {
		if recover() == nil {
			t.Fatal("asking for pods as nodes did not panic")
		}
	}()
	f.ForResource("pods", newLW, &corev1.Node{})
}

func TestFactoryStartsInformersOnceAndWaitsForTheirCaches(t *testing.T) {
	src := cachetest.NewSource(&corev1.Pod{})
	mustCreate(t, src, makePod("default", "a").Obj())
	f := NewSharedInformerFactory(0, WithInformerLogger(quiet))
	inf := f.ForResource("pods", func() ListerWatcher { return src }, &corev1.Pod{})

	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx)
	f.Start(ctx) // a second Start does not run the informer twice
	synced := f.WaitForCacheSync(ctx)
	if !synced["pods"] || len(synced) != 1 {
		t.Fatalf("WaitForCacheSync = %v", synced)
	}
	if objs, _ := inf.GetIndexer().ByIndex(NamespaceIndex, "default"); len(objs) != 1 {
		t.Fatalf("the factory's informer has no namespace index: %v", objs)
	}
	cancel()
	f.Shutdown()
	if !inf.IsStopped() {
		t.Fatal("informer still running after Shutdown")
	}
	if src.ListCalls() != 1 {
		t.Fatalf("listed %d times: one informer per resource means one list", src.ListCalls())
	}
}

func TestWaitForCacheSyncGivesUpWhenTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if WaitForCacheSync(ctx, func() bool { return false }) {
		t.Fatal("reported synced")
	}
	if !WaitForCacheSync(context.Background(), func() bool { return true }) {
		t.Fatal("did not report synced")
	}
}
