package leaderelection

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"podline.dev/pkg/clock"
)

// Kubernetes' defaults (kube-scheduler and kube-controller-manager flags
// --leader-elect-lease-duration, -renew-deadline, -retry-period).
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// JitterFactor stretches each wait between attempts to take the lease by up
// to this fraction of RetryPeriod, so candidates do not retry in lockstep.
const JitterFactor = 1.2

// Callbacks are told about leadership. OnStartedLeading is required.
type Callbacks struct {
	// OnStartedLeading runs in its own goroutine when this candidate becomes
	// the leader; ctx is cancelled when it stops being the leader.
	OnStartedLeading func(ctx context.Context)
	// OnStoppedLeading is called when Run returns, whether or not this
	// candidate ever led (as client-go does); components usually exit here.
	OnStoppedLeading func()
	// OnNewLeader is called, in its own goroutine, with the identity of
	// each leader this candidate observes (itself included).
	OnNewLeader func(identity string)
}

// Config configures a LeaderElector. Zero durations take the defaults above.
type Config struct {
	// Lock is the record candidates compete for (NewLeaseLock).
	Lock Lock
	// LeaseDuration is how long a candidate waits, after it last saw the
	// record change, before it takes the lease from a silent holder.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps trying to renew before it gives up.
	RenewDeadline time.Duration
	// RetryPeriod is the wait between attempts.
	RetryPeriod time.Duration
	// Callbacks are told about leadership.
	Callbacks Callbacks
	// ReleaseOnCancel clears the holder when Run's context is cancelled, so
	// another candidate takes over at once. Only set it when the work that
	// OnStartedLeading started has stopped by the time ctx is cancelled.
	ReleaseOnCancel bool
	// Clock defaults to the wall clock.
	Clock clock.Clock
	// Name appears in logs (defaults to the lock's description).
	Name string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

func (c *Config) complete() error {
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = DefaultRenewDeadline
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	switch {
	case c.Lock == nil:
		return fmt.Errorf("%w: Lock must not be nil", ErrInvalidConfig)
	case c.Lock.Identity() == "":
		return fmt.Errorf("%w: the lock's identity must not be empty", ErrInvalidConfig)
	case c.Callbacks.OnStartedLeading == nil:
		return fmt.Errorf("%w: OnStartedLeading must not be nil", ErrInvalidConfig)
	case c.LeaseDuration < 0 || c.RenewDeadline < 0 || c.RetryPeriod < 0:
		return fmt.Errorf("%w: durations must not be negative", ErrInvalidConfig)
	case c.LeaseDuration <= c.RenewDeadline:
		return fmt.Errorf("%w: LeaseDuration (%v) must be greater than RenewDeadline (%v)", ErrInvalidConfig, c.LeaseDuration, c.RenewDeadline)
	case float64(c.RenewDeadline) <= JitterFactor*float64(c.RetryPeriod):
		return fmt.Errorf("%w: RenewDeadline (%v) must be greater than %v × RetryPeriod (%v)", ErrInvalidConfig, c.RenewDeadline, JitterFactor, c.RetryPeriod)
	}
	if c.Name == "" {
		c.Name = c.Lock.Describe()
	}
	return nil
}
