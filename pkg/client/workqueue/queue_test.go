package workqueue

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// eventually polls cond until it holds, failing the test after a few seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func get[T comparable](t *testing.T, q Interface[T]) T {
	t.Helper()
	item, shutdown := q.Get()
	if shutdown {
		t.Fatal("Get reported shutdown")
	}
	return item
}

func TestQueueHoldsAnItemOnceHoweverOftenItIsAdded(t *testing.T) {
	q := New[string]()
	for _, k := range []string{"default/a", "default/b", "default/a", "default/a", "default/b"} {
		q.Add(k)
	}
	if q.Len() != 2 {
		t.Fatalf("Len = %d, want 2", q.Len())
	}
	if a, b := get(t, q), get(t, q); a != "default/a" || b != "default/b" {
		t.Fatalf("got %s, %s: want first-added order", a, b)
	}
}

func TestItemAddedWhileProcessingIsProcessedAgainAfterDone(t *testing.T) {
	q := New[string]()
	q.Add("a")
	item := get(t, q)
	q.Add("a")
	q.Add("a")
	if q.Len() != 0 {
		t.Fatalf("an item in flight was handed out again: Len = %d", q.Len())
	}
	q.Done(item)
	if q.Len() != 1 {
		t.Fatalf("after Done, Len = %d, want 1", q.Len())
	}
	if again := get(t, q); again != "a" {
		t.Fatalf("got %q", again)
	}
	q.Done("a")
	if q.Len() != 0 {
		t.Fatalf("processed twice for one re-add: Len = %d", q.Len())
	}
}

func TestItemIsNeverProcessedByTwoWorkersAtOnce(t *testing.T) {
	const keys, workers, adds = 8, 6, 4000
	q := New[int]()
	var inFlight [keys]atomic.Int32
	var processed atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				if n := inFlight[k].Add(1); n != 1 {
					t.Errorf("key %d processed by %d workers at once", k, n)
				}
				runtime.Gosched()
				inFlight[k].Add(-1)
				processed.Add(1)
				q.Done(k)
			}
		})
	}
	for i := range adds {
		q.Add(i % keys)
	}
	q.ShutDownWithDrain()
	wg.Wait()
	if processed.Load() == 0 {
		t.Fatal("nothing was processed")
	}
}

func TestShutDownHandsOutQueuedItemsThenReportsShutdown(t *testing.T) {
	q := New[string]()
	q.Add("a")
	q.ShutDown()
	q.Add("b")
	if !q.ShuttingDown() {
		t.Fatal("ShuttingDown is false")
	}
	if item := get(t, q); item != "a" {
		t.Fatalf("got %q, want the item queued before shutdown", item)
	}
	if item, shutdown := q.Get(); !shutdown || item != "" {
		t.Fatalf("Get = %q, %v; want shutdown (an Add after ShutDown is dropped)", item, shutdown)
	}
}

func TestShutDownWakesBlockedWorkers(t *testing.T) {
	q := New[string]()
	done := make(chan bool)
	go func() { _, shutdown := q.Get(); done <- shutdown }()
	q.ShutDown()
	if !<-done {
		t.Fatal("blocked Get did not report shutdown")
	}
}

func TestShutDownWithDrainWaitsForEveryItemToBeDone(t *testing.T) {
	q := New[string]()
	q.Add("in-flight")
	q.Add("queued")
	item := get(t, q)

	drained := make(chan struct{})
	go func() { q.ShutDownWithDrain(); close(drained) }()
	eventually(t, "shutdown to begin", q.ShuttingDown)

	// The drain cannot have finished: "in-flight" is not Done.
	select {
	case <-drained:
		t.Fatal("ShutDownWithDrain returned with an item in flight")
	default:
	}
	q.Done(item)
	// "queued" is still handed out during the drain.
	next, shutdown := q.Get()
	if shutdown || next != "queued" {
		t.Fatalf("Get during drain = %q, %v", next, shutdown)
	}
	select {
	case <-drained:
		t.Fatal("ShutDownWithDrain returned with an item in flight")
	default:
	}
	q.Done(next)
	<-drained
	if _, shutdown := q.Get(); !shutdown {
		t.Fatal("Get after drain did not report shutdown")
	}
}

func TestShutDownEndsADrainThatIsWaiting(t *testing.T) {
	q := New[string]()
	q.Add("stuck")
	get(t, q)
	drained := make(chan struct{})
	go func() { q.ShutDownWithDrain(); close(drained) }()
	eventually(t, "shutdown to begin", q.ShuttingDown)
	q.ShutDown()
	<-drained
}

func BenchmarkWorkqueueAddGet(b *testing.B) {
	b.Run("sequential", func(b *testing.B) {
		q := New[int]()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			q.Add(i & 1023)
			item, _ := q.Get()
			q.Done(item)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		q := New[int]()
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				q.Add(int(next.Add(1) & 1023))
				item, _ := q.Get()
				q.Done(item)
			}
		})
	})
}
