package cache

import (
	"math/rand/v2"
	"time"
)

// Backoff is how long a Reflector waits after a failed list or watch: Initial
// after the first failure, multiplied by Factor for each further one up to
// Max, each wait stretched by up to Jitter times itself at random so that
// many clients do not retry in step. After ResetAfter without a failure it
// starts over at Initial. The zero Backoff never waits (for tests).
type Backoff struct {
	Initial    time.Duration
	Max        time.Duration
	Factor     float64
	Jitter     float64
	ResetAfter time.Duration
	// Rand returns a number in [0, 1) for the jitter; nil means math/rand/v2.
	Rand func() float64
}

// DefaultBackoff is client-go's reflector backoff: 800 ms doubling to 30 s,
// with up to 100% jitter, reset after 2 minutes of health.
var DefaultBackoff = Backoff{
	Initial:    800 * time.Millisecond,
	Max:        30 * time.Second,
	Factor:     2,
	Jitter:     1,
	ResetAfter: 2 * time.Minute,
}

// backoffState is a Backoff in use: a pure function of the failure times.
type backoffState struct {
	Backoff
	current     time.Duration
	lastFailure time.Time
}

// next records a failure at now and returns how long to wait.
func (b *backoffState) next(now time.Time) time.Duration {
	fresh := b.lastFailure.IsZero() || (b.ResetAfter > 0 && now.Sub(b.lastFailure) > b.ResetAfter)
	if fresh {
		b.current = b.Initial
	} else {
		b.current = time.Duration(float64(b.current) * max(b.Factor, 1))
		if b.Max > 0 && b.current > b.Max {
			b.current = b.Max
		}
	}
	b.lastFailure = now
	wait := b.current
	if b.Jitter > 0 {
		r := b.Rand
		if r == nil {
			r = rand.Float64
		}
		wait += time.Duration(r() * b.Jitter * float64(wait))
	}
	return wait
}
