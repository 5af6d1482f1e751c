package workqueue

// RateLimitingInterface is a DelayingInterface that delays retries by a RateLimiter.
type RateLimitingInterface[T comparable] interface {
	DelayingInterface[T]
	// AddRateLimited adds item after the limiter's delay for it.
	AddRateLimited(item T)
	// Forget tells the limiter that item succeeded, resetting its backoff.
	// The item stays queued if it is.
	Forget(item T)
	// NumRequeues is how often item was rate limited since its last Forget.
	NumRequeues(item T) int
}

// RateLimitingQueue is a DelayingQueue with a RateLimiter.
type RateLimitingQueue[T comparable] struct {
	*DelayingQueue[T]
	limiter RateLimiter[T]
}

var _ RateLimitingInterface[string] = (*RateLimitingQueue[string])(nil)

// NewRateLimitingQueue returns a queue that delays AddRateLimited by limiter,
// for example DefaultControllerRateLimiter. Pass the same clock to both.
func NewRateLimitingQueue[T comparable](limiter RateLimiter[T], opts ...Option) *RateLimitingQueue[T] {
	return &RateLimitingQueue[T]{DelayingQueue: NewDelayingQueue[T](opts...), limiter: limiter}
}

func (q *RateLimitingQueue[T]) AddRateLimited(item T)  { q.AddAfter(item, q.limiter.When(item)) }
func (q *RateLimitingQueue[T]) Forget(item T)          { q.limiter.Forget(item) }
func (q *RateLimitingQueue[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }
