package workqueue

import (
	"math"
	"sync"
	"time"

	"podline.dev/pkg/clock"
)

// RateLimiter decides how long an item waits before it is retried.
type RateLimiter[T comparable] interface {
	// When records a retry of item and returns how long it must wait.
	When(item T) time.Duration
	// Forget clears item's history, as after a success.
	Forget(item T)
	// NumRequeues is the number of retries since the last Forget.
	NumRequeues(item T) int
}

// DefaultControllerRateLimiter is client-go's default for controllers: the
// larger of a per-item exponential backoff from 5 ms to 1000 s and a token
// bucket of 10 qps with a burst of 100 shared by all items.
func DefaultControllerRateLimiter[T comparable](opts ...Option) RateLimiter[T] {
	cfg := newConfig(opts)
	return NewMaxOfRateLimiter[T](
		NewItemExponentialFailureRateLimiter[T](5*time.Millisecond, 1000*time.Second),
		NewBucketRateLimiter[T](10, 100, cfg.clock),
	)
}

// ItemExponentialFailureRateLimiter waits base·2^n for an item's n-th retry
// since its last Forget, capped at max.
type ItemExponentialFailureRateLimiter[T comparable] struct {
	base, max time.Duration

	mu       sync.Mutex
	failures map[T]int
}

var _ RateLimiter[string] = (*ItemExponentialFailureRateLimiter[string])(nil)

func NewItemExponentialFailureRateLimiter[T comparable](base, max time.Duration) *ItemExponentialFailureRateLimiter[T] {
	return &ItemExponentialFailureRateLimiter[T]{base: base, max: max, failures: map[T]int{}}
}

func (r *ItemExponentialFailureRateLimiter[T]) When(item T) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.failures[item]
	r.failures[item] = n + 1
	delay := float64(r.base) * math.Pow(2, float64(n))
	if delay > float64(r.max) {
		return r.max
	}
	return time.Duration(delay)
}

func (r *ItemExponentialFailureRateLimiter[T]) Forget(item T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, item)
}

func (r *ItemExponentialFailureRateLimiter[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// BucketRateLimiter is a token bucket shared by all items: it holds up to
// burst tokens, refills at qps, and each When takes one token, waiting for
// it when the bucket is empty. Reservations stack: the second item to find
// the bucket empty waits two tokens' time.
type BucketRateLimiter[T comparable] struct {
	qps   float64
	burst float64
	clock clock.Clock

	mu     sync.Mutex
	tokens float64 // negative when waits are reserved
	last   time.Time
}

var _ RateLimiter[string] = (*BucketRateLimiter[string])(nil)

func NewBucketRateLimiter[T comparable](qps float64, burst int, c clock.Clock) *BucketRateLimiter[T] {
	return &BucketRateLimiter[T]{qps: qps, burst: float64(burst), clock: c, tokens: float64(burst)}
}

func (r *BucketRateLimiter[T]) When(T) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.clock.Now()
	switch {
	case r.last.IsZero():
		r.last = now
	case now.After(r.last):
		r.tokens = math.Min(r.burst, r.tokens+now.Sub(r.last).Seconds()*r.qps)
		r.last = now
	}
	r.tokens--
	if r.tokens >= 0 {
		return 0
	}
	// Multiply before dividing so whole token counts give exact durations.
	return time.Duration(math.Round(-r.tokens * float64(time.Second) / r.qps))
}

// Forget does nothing: the bucket is not per item.
func (r *BucketRateLimiter[T]) Forget(T) {}

// NumRequeues is 0: the bucket is not per item.
func (r *BucketRateLimiter[T]) NumRequeues(T) int { return 0 }

// MaxOfRateLimiter waits as long as the longest of its limiters, each of
// which records every retry.
type MaxOfRateLimiter[T comparable] struct {
	limiters []RateLimiter[T]
}

var _ RateLimiter[string] = (*MaxOfRateLimiter[string])(nil)

func NewMaxOfRateLimiter[T comparable](limiters ...RateLimiter[T]) *MaxOfRateLimiter[T] {
	return &MaxOfRateLimiter[T]{limiters: limiters}
}

func (r *MaxOfRateLimiter[T]) When(item T) time.Duration {
	var longest time.Duration
	for _, l := range r.limiters {
		longest = max(longest, l.When(item))
	}
	return longest
}

func (r *MaxOfRateLimiter[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

func (r *MaxOfRateLimiter[T]) NumRequeues(item T) int {
	var most int
	for _, l := range r.limiters {
		most = max(most, l.NumRequeues(item))
	}
	return most
}
