package workqueue

import "podline.dev/pkg/clock"

// Option configures a queue or a rate limiter.
type Option func(*config)

type config struct {
	clock clock.Clock
}

// WithClock sets the clock that delays and rate limits are measured on
// (default clock.Real).
func WithClock(c clock.Clock) Option { return func(o *config) { o.clock = c } }

func newConfig(opts []Option) config {
	c := config{clock: clock.Real{}}
	for _, o := range opts {
		o(&c)
	}
	return c
}
