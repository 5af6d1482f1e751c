package workqueue

import (
	"testing"
	"time"

	"podline.dev/pkg/clock"
)

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func TestItemExponentialBackoffDoublesFrom5msAndCapsAt1000s(t *testing.T) {
	r := NewItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)
	want := map[int]time.Duration{
		1:   5 * time.Millisecond,
		2:   10 * time.Millisecond,
		3:   20 * time.Millisecond,
		4:   40 * time.Millisecond,
		11:  5120 * time.Millisecond,
		18:  655360 * time.Millisecond, // 5ms·2^17, the last one under the cap
		19:  1000 * time.Second,
		100: 1000 * time.Second, // no overflow far past the cap
	}
	for retry := 1; retry <= 100; retry++ {
		got := r.When("a")
		if w, ok := want[retry]; ok && got != w {
			t.Errorf("retry %d waits %v, want %v", retry, got, w)
		}
	}
	if n := r.NumRequeues("a"); n != 100 {
		t.Errorf("NumRequeues = %d, want 100", n)
	}
	if got := r.When("b"); got != 5*time.Millisecond {
		t.Errorf("another item's first retry waits %v, want 5ms: backoff is per item", got)
	}
	r.Forget("a")
	if r.NumRequeues("a") != 0 || r.When("a") != 5*time.Millisecond {
		t.Error("Forget did not reset the item's backoff")
	}
}

func TestTokenBucketAllowsABurstThenPacesAtQPS(t *testing.T) {
	c := clock.NewFake(epoch)
	r := NewBucketRateLimiter[string](10, 100, c)
	for i := range 100 {
		if d := r.When("x"); d != 0 {
			t.Fatalf("retry %d of the burst waits %v, want 0", i+1, d)
		}
	}
	// The bucket is empty: each further retry reserves the next token, 100ms apart.
	for i, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond} {
		if d := r.When("x"); d != want {
			t.Errorf("retry %d past the burst waits %v, want %v", i+1, d, want)
		}
	}
	// One second refills 10 tokens; 3 were owed, so 7 retries pass at once.
	c.Step(time.Second)
	for i := range 7 {
		if d := r.When("y"); d != 0 {
			t.Fatalf("retry %d after refill waits %v, want 0", i+1, d)
		}
	}
	if d := r.When("y"); d != 100*time.Millisecond {
		t.Errorf("retry past the refill waits %v, want 100ms", d)
	}
	// A long pause refills to the burst and no further.
	c.Step(time.Hour)
	for range 100 {
		r.When("z")
	}
	if d := r.When("z"); d != 100*time.Millisecond {
		t.Errorf("bucket held more than its burst: wait %v", d)
	}
}

func TestDefaultControllerRateLimiterTakesTheLongerWait(t *testing.T) {
	c := clock.NewFake(epoch)
	r := DefaultControllerRateLimiter[string](WithClock(c))
	tests := []struct {
		name string
		item string
		want time.Duration
	}{
		{"first retry: per-item backoff", "a", 5 * time.Millisecond},
		{"second retry doubles", "a", 10 * time.Millisecond},
		{"another item starts at 5ms", "b", 5 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := r.When(tt.item); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	// Exhaust the bucket (97 tokens left) with fresh items; then the bucket's wait wins.
	for i := range 97 {
		r.When(string(rune('c' + i)))
	}
	if got := r.When("fresh"); got != 100*time.Millisecond {
		t.Errorf("with the bucket empty a fresh item waits %v, want the bucket's 100ms", got)
	}
	if r.NumRequeues("a") != 2 {
		t.Errorf("NumRequeues(a) = %d, want 2", r.NumRequeues("a"))
	}
	r.Forget("a")
	if r.NumRequeues("a") != 0 {
		t.Error("Forget did not reach the per-item limiter")
	}
}
