package watchcache

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
)

// benchPods are 1,000 pods over 10 namespaces; benchmarks apply MODIFIED
// events over them. The objects are reused: the cache never looks inside
// beyond key, labels and filters, so reuse measures the cache, not the
// allocation of test objects.
func benchPods() []*corev1.Pod {
	pods := make([]*corev1.Pod, 1000)
	for i := range pods {
		pods[i] = MakePod(fmt.Sprintf("p%d", i)).Namespace(fmt.Sprintf("ns%d", i%10)).Label("app", "web").RV(1).Obj()
	}
	return pods
}

func benchCache(b *testing.B, pods []*corev1.Pod, opts ...Option) *Cache {
	objs := make([]object.Object, len(pods))
	for i, p := range pods {
		objs[i] = p
	}
	c := New(append([]Option{WithExemplar(&corev1.Pod{})}, opts...)...)
	c.Replace(objs, 1)
	return c
}

// BenchmarkApplyFanout applies events to a cache with 1,000 watchers, each
// read by its own client goroutine, with the default watcher buffer. Events
// go in windows of 100, and each window ends when every client has
// received its share, so no watcher lags more than its buffer allows (the
// steady state of an apiserver whose clients keep up) and none is dropped.
//
// events/s is applied events per second; ns/delivered is the wall time per
// event a client received; ns/apply is the time Apply itself takes (it
// holds the cache's lock for that long; the etcd watch loop waits for it);
// cpu-ns/delivered is the process's CPU time (cache, watcher goroutines and
// clients together) per event a client received, which, unlike wall time,
// does not depend on what else the machine runs.
func BenchmarkApplyFanout(b *testing.B) {
	for _, bc := range []struct {
		name string
		// filter for watcher i
		filter func(i int) Filter
		// whether watcher i receives event j
		gets func(i, j int) bool
	}{
		{
			name:   "all-watchers-match",
			filter: func(int) Filter { return Filter{} },
			gets:   func(int, int) bool { return true },
		},
		{
			name:   "no-watcher-matches",
			filter: func(int) Filter { return Filter{Namespace: "elsewhere"} },
			gets:   func(int, int) bool { return false },
		},
		{
			name:   "each-watcher-one-namespace-of-10",
			filter: func(i int) Filter { return Filter{Namespace: fmt.Sprintf("ns%d", i%10)} },
			gets:   func(i, j int) bool { return i%10 == j%1000%10 },
		},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const (
				watchers = 1000
				window   = 100
			)
			pods := benchPods()
			c := benchCache(b, pods)
			windows := (b.N + window - 1) / window
			share := func(i, k int) int { // events of window k watcher i gets
				n := 0
				for j := k * window; j < min((k+1)*window, b.N); j++ {
					if bc.gets(i, j) {
						n++
					}
				}
				return n
			}
			received := make([]sync.WaitGroup, windows) // one per window
			for k := range received {
				received[k].Add(watchers)
			}
			all := make([]watch.Interface, watchers)
			for i := range watchers {
				w, err := c.Watch(b.Context(), 1, bc.filter(i), false)
				if err != nil {
					b.Fatal(err)
				}
				all[i] = w
				go func() {
					for k := range windows {
						for range share(i, k) {
							if _, ok := <-w.ResultChan(); !ok {
								panic("watch closed during the benchmark")
							}
						}
						received[k].Done()
					}
					for range w.ResultChan() { // until Stop below
					}
				}()
			}
			b.ReportAllocs()
			b.ResetTimer()
			var inApply time.Duration
			start, startCPU := time.Now(), processCPU()
			for k := range windows {
				for j := k * window; j < min((k+1)*window, b.N); j++ {
					t := time.Now()
					if err := c.Apply(Event{Type: watch.Modified, Object: pods[j%len(pods)], Revision: int64(j + 2)}); err != nil {
						b.Fatal(err)
					}
					inApply += time.Since(t)
				}
				received[k].Wait()
			}
			elapsed, cpu := time.Since(start), processCPU()-startCPU
			b.StopTimer()
			m := c.Metrics()
			for _, w := range all {
				w.Stop()
			}

			if m.SlowWatchersDropped != 0 {
				b.Fatalf("%d watchers dropped", m.SlowWatchersDropped)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(inApply.Nanoseconds())/float64(b.N), "ns/apply")
			b.ReportMetric(float64(inApply.Nanoseconds())/float64(b.N*watchers), "ns/apply/watcher")
			if m.EventsQueued > 0 {
				b.ReportMetric(float64(elapsed.Nanoseconds())/float64(m.EventsQueued), "ns/delivered")
				if cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(m.EventsQueued), "cpu-ns/delivered")
				}
			}
			b.ReportMetric(float64(m.EventsQueued)/float64(b.N), "deliveries/event")
		})
	}
}

// BenchmarkMemoryPerEvent reports the heap the cache keeps per event: in
// the ring (a full ring of 65,536 events; the objects themselves are
// excluded, they are the source's), and in the queue of a watcher that
// does not read.
func BenchmarkMemoryPerEvent(b *testing.B) {
	const capacity = 1 << 16
	b.Run("ring", func(b *testing.B) {
		pods := benchPods()
		for range b.N {
			before := heapInUse()
			c := benchCache(b, pods, WithCapacity(capacity))
			for j := range capacity {
				c.Apply(Event{Type: watch.Modified, Object: pods[j%len(pods)], Revision: int64(j + 2)})
			}
			after := heapInUse()
			b.ReportMetric(float64(after-before)/capacity, "B/event")
			runtime.KeepAlive(c)
		}
	})
	b.Run("watcher-queue", func(b *testing.B) {
		pods := benchPods()
		for range b.N {
			c := benchCache(b, pods, WithCapacity(16), WithWatcherBuffer(capacity+1))
			w, err := c.Watch(b.Context(), 1, Filter{}, false)
			if err != nil {
				b.Fatal(err)
			}
			before := heapInUse()
			for j := range capacity {
				c.Apply(Event{Type: watch.Modified, Object: pods[j%len(pods)], Revision: int64(j + 2)})
			}
			after := heapInUse()
			b.ReportMetric(float64(after-before)/capacity, "B/queued-event")
			w.Stop()
			runtime.KeepAlive(c)
		}
	})
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
