package leaderelection

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// LeaderElector runs one candidate of an election. Create it with New and
// call Run once.
type LeaderElector struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	observed observation
	// reported is the last leader handed to OnNewLeader.
	reported string
}

// New checks cfg, fills its defaults and returns a LeaderElector.
func New(cfg Config) (*LeaderElector, error) {
	if err := cfg.complete(); err != nil {
		return nil, err
	}
	return &LeaderElector{cfg: cfg, log: cfg.Logger.With("lock", cfg.Name, "identity", cfg.Lock.Identity())}, nil
}

// Run competes for the lock until ctx is done; once leader it runs
// OnStartedLeading and renews until it fails to within RenewDeadline or ctx
// is done, then returns (releasing the lock when ReleaseOnCancel is set).
// OnStoppedLeading is called as Run returns.
func (le *LeaderElector) Run(ctx context.Context) {
	defer func() {
		if f := le.cfg.Callbacks.OnStoppedLeading; f != nil {
			f()
		}
	}()
	if !le.acquire(ctx) {
		return
	}
	leadCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go le.cfg.Callbacks.OnStartedLeading(leadCtx)
	le.renew(ctx)
}

// IsLeader reports whether this candidate held the lock when it last looked.
func (le *LeaderElector) IsLeader() bool {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.observed.record.HolderIdentity == le.cfg.Lock.Identity()
}

// GetLeader is the holder this candidate last observed ("" for none).
func (le *LeaderElector) GetLeader() string {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.observed.record.HolderIdentity
}

// acquire tries every RetryPeriod (jittered) until it takes the lock or ctx is done.
func (le *LeaderElector) acquire(ctx context.Context) bool {
	le.log.Info("attempting to acquire leader lease")
	for {
		if le.tryAcquireOrRenew(ctx) {
			le.log.Info("successfully acquired lease")
			return true
		}
		wait := le.cfg.RetryPeriod + time.Duration(rand.Float64()*JitterFactor*float64(le.cfg.RetryPeriod))
		if !le.sleep(ctx, wait) {
			return false
		}
	}
}

// renew keeps the lock every RetryPeriod; it returns when a renewal has
// failed for RenewDeadline, or ctx is done.
func (le *LeaderElector) renew(ctx context.Context) {
	defer func() {
		if le.cfg.ReleaseOnCancel && ctx.Err() != nil {
			le.release()
		}
	}()
	for {
		if !le.sleep(ctx, le.cfg.RetryPeriod) {
			return
		}
		if !le.renewWithin(ctx) {
			if ctx.Err() == nil {
				le.log.Warn("failed to renew lease; leadership lost", "renewDeadline", le.cfg.RenewDeadline)
			}
			return
		}
	}
}

// renewWithin retries every RetryPeriod until a renewal succeeds or RenewDeadline passes.
func (le *LeaderElector) renewWithin(ctx context.Context) bool {
	deadline := le.cfg.Clock.Now().Add(le.cfg.RenewDeadline)
	for {
		attempt, cancel := context.WithTimeout(ctx, le.cfg.RenewDeadline)
		ok := le.tryAcquireOrRenew(attempt)
		cancel()
		if ok {
			return true
		}
		if !le.cfg.Clock.Now().Add(le.cfg.RetryPeriod).Before(deadline) || !le.sleep(ctx, le.cfg.RetryPeriod) {
			return false
		}
	}
}

// tryAcquireOrRenew reads the record and writes this candidate as holder
// when decide allows it.
func (le *LeaderElector) tryAcquireOrRenew(ctx context.Context) bool {
	now := le.cfg.Clock.Now().Truncate(time.Microsecond)
	id := le.cfg.Lock.Identity()
	cur, err := le.cfg.Lock.Get(ctx)
	if errors.Is(err, ErrLockNotFound) {
		next, _ := decide(Record{}, observation{}, now, id, le.cfg.LeaseDuration)
		if err := le.cfg.Lock.Create(ctx, next); err != nil {
			le.log.Info("could not create lease", "err", err)
			return false
		}
		le.observe(next, now)
		return true
	}
	if err != nil {
		le.log.Warn("could not read lease", "err", err)
		return false
	}
	seen := le.observe(cur, now)
	next, ok := decide(cur, seen, now, id, le.cfg.LeaseDuration)
	if !ok {
		return false
	}
	if err := le.cfg.Lock.Update(ctx, next); err != nil {
		le.log.Info("could not update lease", "err", err)
		return false
	}
	le.observe(next, now)
	return true
}

// observe records r as seen at now unless it is the record already seen,
// tells OnNewLeader about a new holder, and returns the observation.
func (le *LeaderElector) observe(r Record, now time.Time) observation {
	le.mu.Lock()
	if !sameRecord(r, le.observed.record) {
		le.observed = observation{record: r, time: now}
	}
	seen := le.observed
	report := r.HolderIdentity != "" && r.HolderIdentity != le.reported
	if report {
		le.reported = r.HolderIdentity
	}
	le.mu.Unlock()
	if report {
		le.log.Info("new leader elected", "leader", r.HolderIdentity)
		if f := le.cfg.Callbacks.OnNewLeader; f != nil {
			go f(r.HolderIdentity)
		}
	}
	return seen
}

// release steps down: it clears the holder if this candidate still holds
// the lock. It reads the record first, because a renewal cancelled in flight
// may have landed after all.
func (le *LeaderElector) release() {
	if !le.IsLeader() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), le.cfg.RenewDeadline)
	defer cancel()
	cur, err := le.cfg.Lock.Get(ctx)
	if err != nil {
		le.log.Warn("could not release lease", "err", err)
		return
	}
	if cur.HolderIdentity != le.cfg.Lock.Identity() {
		return
	}
	now := le.cfg.Clock.Now().Truncate(time.Microsecond)
	next := released(cur, now)
	if err := le.cfg.Lock.Update(ctx, next); err != nil {
		le.log.Warn("could not release lease", "err", err)
		return
	}
	le.observe(next, now)
	le.log.Info("released lease")
}

// sleep waits d on the injected clock; false when ctx ended first.
func (le *LeaderElector) sleep(ctx context.Context, d time.Duration) bool {
	t := le.cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

func sameRecord(a, b Record) bool {
	return a.HolderIdentity == b.HolderIdentity &&
		a.LeaseDurationSeconds == b.LeaseDurationSeconds &&
		a.AcquireTime.Equal(b.AcquireTime) &&
		a.RenewTime.Equal(b.RenewTime) &&
		a.LeaderTransitions == b.LeaderTransitions
}
