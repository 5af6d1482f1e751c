package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/leaderelection"
	"podline.dev/pkg/client/record"
	"podline.dev/pkg/clock"
	"podline.dev/services/controller-manager/internal/controller"
)

// Lease the controller-managers compete for.
const (
	LeaseNamespace = "kube-system"
	LeaseName      = "kube-controller-manager"
)

// Config is everything Run needs.
type Config struct {
	Conn grpc.ClientConnInterface
	// Controllers selects controllers as --controllers does: "*" is every
	// one, "name" enables one, "-name" disables one. Empty means "*".
	Controllers []string
	// Workers overrides DefaultWorkers per controller.
	Workers map[string]int
	Options controller.Options

	LeaderElect bool
	// Identity is this instance's holderIdentity; empty is hostname_uuid.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod of the election; zero
	// means Kubernetes' defaults (15 s, 10 s, 2 s).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration

	// Recorders makes event recorders; nil writes Events to the apiserver.
	Recorders controller.RecorderFactory
	// ResyncPeriod of the informers (0: never).
	ResyncPeriod time.Duration
	Clock        clock.Clock
	Log          *slog.Logger
	// OnStartedLeading, if set, is told when this instance starts its controllers.
	OnStartedLeading func()
}

// Enabled resolves the selection to controller names, sorted.
func Enabled(selection []string) ([]string, error) {
	if len(selection) == 0 {
		selection = []string{"*"}
	}
	on := map[string]bool{}
	star := false
	for _, s := range selection {
		s = strings.TrimSpace(s)
		name := strings.TrimPrefix(s, "-")
		switch {
		case s == "*":
			star = true
		case name == "":
		case Registry[name] == nil:
			return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownController, name, strings.Join(Names(), ", "))
		case strings.HasPrefix(s, "-"):
			on[name] = false
		default:
			on[name] = true
		}
	}
	var out []string
	for _, name := range Names() {
		v, set := on[name]
		if (set && v) || (!set && star) {
			out = append(out, name)
		}
	}
	return out, nil
}

// Names lists the registry, sorted.
func Names() []string {
	var names []string
	for n := range Registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Run runs the selected controllers until ctx is done; with LeaderElect,
// only while this instance holds the Lease, returning ErrLeadershipLost if
// it loses it.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	names, err := Enabled(cfg.Controllers)
	if err != nil {
		return err
	}
	if !cfg.LeaderElect {
		return runControllers(ctx, cfg, names)
	}
	identity := cfg.Identity
	if identity == "" {
		identity = leaderelection.DefaultIdentity()
	}
	var (
		runErr  error
		done    sync.WaitGroup
		mu      sync.Mutex
		stopped bool
	)
	le, err := leaderelection.New(leaderelection.Config{
		Lock:          leaderelection.NewLeaseLock(cfg.Conn, LeaseNamespace, LeaseName, identity),
		LeaseDuration: cfg.LeaseDuration,
		RenewDeadline: cfg.RenewDeadline,
		RetryPeriod:   cfg.RetryPeriod,
		Clock:         cfg.Clock,
		Logger:        cfg.Log,
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				mu.Lock()
				if stopped {
					mu.Unlock()
					return
				}
				done.Add(1)
				mu.Unlock()
				defer done.Done()
				cfg.Log.Info("started leading", "identity", identity)
				runErr = runControllers(ctx, cfg, names)
			},
			OnNewLeader: func(id string) { cfg.Log.Info("new leader", "identity", id) },
		},
	})
	if err != nil {
		return err
	}
	le.Run(ctx)
	mu.Lock()
	stopped = true
	mu.Unlock()
	done.Wait()
	if ctx.Err() != nil {
		return runErr
	}
	return ErrLeadershipLost
}

// runControllers builds the controllers on one informer factory, starts the
// factory and runs them until ctx is done.
func runControllers(ctx context.Context, cfg Config, names []string) error {
	factory := cache.NewSharedInformerFactory(cfg.ResyncPeriod)
	recorders := cfg.Recorders
	var owned []*record.Recorder
	var mu sync.Mutex
	if recorders == nil {
		host, _ := os.Hostname()
		recorders = func(component string) controller.EventRecorder {
			r := record.NewRecorder(cfg.Conn, component, host, record.WithQueueSize(10000), record.WithLogger(cfg.Log))
			mu.Lock()
			owned = append(owned, r)
			mu.Unlock()
			return r
		}
	}
	defer func() {
		for _, r := range owned {
			r.Shutdown()
		}
	}()
	opts := cfg.Options
	if opts == (controller.Options{}) {
		opts = controller.DefaultOptions()
	}
	cctx := &controller.Context{
		Conn:      cfg.Conn,
		Informers: factory,
		Recorders: recorders,
		Clock:     cfg.Clock,
		Log:       cfg.Log,
		Options:   opts,
	}
	workers := DefaultWorkers()
	for k, v := range cfg.Workers {
		workers[k] = v
	}
	type built struct {
		name string
		r    Runnable
	}
	var ctrls []built
	for _, name := range names {
		r, err := Registry[name](cctx)
		if errors.Is(err, ErrNotConfigured) {
			cfg.Log.Warn("controller not started: not configured", "controller", name)
			continue
		}
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		ctrls = append(ctrls, built{name, r})
	}
	factory.Start(ctx)
	if cfg.OnStartedLeading != nil {
		cfg.OnStartedLeading()
	}
	cfg.Log.Info("controllers started", "controllers", strings.Join(names, ","))
	var wg sync.WaitGroup
	errs := make([]error, len(ctrls))
	for i, c := range ctrls {
		wg.Go(func() {
			if err := c.r.Run(ctx, workers[c.name]); err != nil && ctx.Err() == nil {
				errs[i] = fmt.Errorf("controller %s: %w", c.name, err)
				cfg.Log.Error("controller stopped", "controller", c.name, "err", err)
			}
		})
	}
	wg.Wait()
	factory.Shutdown()
	return errors.Join(slices.DeleteFunc(errs, func(e error) bool { return e == nil })...)
}
