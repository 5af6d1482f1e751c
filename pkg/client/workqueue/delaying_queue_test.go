package workqueue

import (
	"testing"
	"time"

	"podline.dev/pkg/clock"
)

func (q *DelayingQueue[T]) waitingLen() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting.Len()
}

func TestAddAfterAddsWhenTheClockReachesTheDelay(t *testing.T) {
	c := clock.NewFake(epoch)
	q := NewDelayingQueue[string](WithClock(c))
	defer q.ShutDown()

	q.AddAfter("slow", 50*time.Millisecond)
	q.AddAfter("fast", 10*time.Millisecond)
	q.AddAfter("now", 0)
	if got := get(t, q); got != "now" {
		t.Fatalf("got %q, want the undelayed item", got)
	}
	q.Done("now")

	c.Step(10 * time.Millisecond)
	eventually(t, "fast to be added", func() bool { return q.Len() == 1 })
	if got := get(t, q); got != "fast" {
		t.Fatalf("got %q, want fast", got)
	}
	c.Step(39 * time.Millisecond)
	if q.Len() != 0 {
		t.Fatal("slow was added 1ms early")
	}
	c.Step(time.Millisecond)
	eventually(t, "slow to be added", func() bool { return q.Len() == 1 })
}

func TestAddAfterKeepsTheEarlierTimeOfAnItem(t *testing.T) {
	c := clock.NewFake(epoch)
	q := NewDelayingQueue[string](WithClock(c))
	defer q.ShutDown()

	q.AddAfter("a", time.Second)
	q.AddAfter("a", 10*time.Millisecond)
	q.AddAfter("a", time.Minute)
	if q.waitingLen() != 1 {
		t.Fatalf("item waits %d times", q.waitingLen())
	}
	c.Step(10 * time.Millisecond)
	eventually(t, "a to be added", func() bool { return q.Len() == 1 })
	if q.waitingLen() != 0 {
		t.Fatal("item still waiting after it was added")
	}
}

func TestShutDownDropsItemsStillWaiting(t *testing.T) {
	c := clock.NewFake(epoch)
	q := NewDelayingQueue[string](WithClock(c))
	q.AddAfter("later", time.Second)
	q.ShutDown()
	q.AddAfter("after-shutdown", 0)
	c.Step(time.Hour)
	if _, shutdown := q.Get(); !shutdown {
		t.Fatal("a delayed item survived ShutDown")
	}
}

func TestAddRateLimitedWaitsForTheLimiter(t *testing.T) {
	c := clock.NewFake(epoch)
	q := NewRateLimitingQueue(DefaultControllerRateLimiter[string](WithClock(c)), WithClock(c))
	defer q.ShutDown()

	for retry, delay := range []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond} {
		q.AddRateLimited("default/web")
		c.Step(delay - time.Millisecond)
		if q.Len() != 0 {
			t.Fatalf("retry %d added before its %v backoff", retry+1, delay)
		}
		c.Step(time.Millisecond)
		eventually(t, "the retry to be added", func() bool { return q.Len() == 1 })
		q.Done(get(t, q))
	}
	if n := q.NumRequeues("default/web"); n != 3 {
		t.Fatalf("NumRequeues = %d, want 3", n)
	}
	q.Forget("default/web")
	if n := q.NumRequeues("default/web"); n != 0 {
		t.Fatalf("NumRequeues after Forget = %d", n)
	}
}
