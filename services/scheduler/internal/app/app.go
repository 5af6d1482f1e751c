// Package app runs a scheduler process: the scheduler's informers on every
// replica, and its scheduling loop only while this replica holds the
// leader Lease (or always, without leader election). cmd/scheduler parses
// flags into a Config; tests run two replicas side by side.
package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"google.golang.org/grpc"

	"podline.dev/pkg/client/leaderelection"
	"podline.dev/services/scheduler/internal/metrics"
	"podline.dev/services/scheduler/internal/profile"
	"podline.dev/services/scheduler/internal/scheduler"
)

// ErrLeadershipLost is returned when this replica stopped leading while
// its context was still live; kube-scheduler exits then, and so should the caller.
var ErrLeadershipLost = errors.New("leaderelection lost")

// Config is one scheduler process.
type Config struct {
	Conn    grpc.ClientConnInterface
	Profile *profile.Config
	Metrics *metrics.Metrics
	Logger  *slog.Logger

	LeaderElect   bool
	LockNamespace string
	LockName      string
	// Identity is the holderIdentity (default leaderelection.DefaultIdentity()).
	Identity      string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration

	// SchedulerOptions are passed to scheduler.New (tests: host, backoff).
	SchedulerOptions []scheduler.Option
	// OnScheduler, when set, is handed the scheduler once it is built (tests).
	OnScheduler func(*scheduler.Scheduler)
}

// Run runs the process until ctx is done (nil error on a clean stop) or
// leadership is lost (ErrLeadershipLost).
func Run(ctx context.Context, cfg Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.Profile == nil {
		cfg.Profile = profile.Default()
	}
	opts := append([]scheduler.Option{scheduler.WithLogger(log)}, cfg.SchedulerOptions...)
	if cfg.Metrics != nil {
		opts = append(opts, scheduler.WithMetrics(cfg.Metrics))
	}
	sched, err := scheduler.New(ctx, cfg.Conn, cfg.Profile, opts...)
	if err != nil {
		return err
	}
	defer sched.Shutdown()
	if cfg.OnScheduler != nil {
		cfg.OnScheduler(sched)
	}
	// Informers run on every replica, so a new leader starts with a warm cache.
	sched.Start(ctx)
	if !sched.WaitForCacheSync(ctx) {
		return nil
	}
	if !cfg.LeaderElect {
		sched.Run(ctx)
		return nil
	}
	id := cfg.Identity
	if id == "" {
		id = leaderelection.DefaultIdentity()
	}
	setMaster := func(v float64) {
		if cfg.Metrics != nil {
			cfg.Metrics.LeaderElectionMaster.WithLabelValues(cfg.LockName).Set(v)
		}
	}
	lost := false
	le, err := leaderelection.New(leaderelection.Config{
		Lock:            leaderelection.NewLeaseLock(cfg.Conn, cfg.LockNamespace, cfg.LockName, id),
		LeaseDuration:   cfg.LeaseDuration,
		RenewDeadline:   cfg.RenewDeadline,
		RetryPeriod:     cfg.RetryPeriod,
		ReleaseOnCancel: true,
		Logger:          log,
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				setMaster(1)
				sched.Run(ctx)
			},
			OnStoppedLeading: func() {
				setMaster(0)
				lost = ctx.Err() == nil
			},
			OnNewLeader: func(l string) {
				if l != id {
					log.Info("another replica leads; waiting", "leader", l)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	le.Run(ctx)
	if lost {
		return ErrLeadershipLost
	}
	return nil
}
