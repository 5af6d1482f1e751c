package servicealloc

import (
	"context"
	"errors"
	"log/slog"
	"time"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/allocator"
)

// DefaultRepairInterval is kube-apiserver's period of its repair controllers.
const DefaultRepairInterval = 3 * time.Minute

// ListFunc reads every stored Service (a quorum read).
type ListFunc func(ctx context.Context) ([]*corev1.Service, error)

// Repair rebuilds the IP and port bitmaps from the stored Services, as
// kube-apiserver's repair controllers do: values in use are marked (so a
// bitmap lost or rolled back heals), values no Service uses are freed after
// allocator.DefaultLeakRepairs runs in a row saw them unused.
type Repair struct {
	ips, ports *allocator.Repairer
	list       ListFunc
	log        *slog.Logger
}

// NewRepair returns the repair of al's ranges; leakRepairs 0 is the default.
func NewRepair(al *Allocators, list ListFunc, leakRepairs int, log *slog.Logger) *Repair {
	if log == nil {
		log = slog.Default()
	}
	return &Repair{
		ips:   allocator.NewRepairer(al.IPs, leakRepairs, log),
		ports: allocator.NewRepairer(al.Ports, leakRepairs, log),
		list:  list, log: log,
	}
}

// RunOnce repairs both ranges once, retrying a run that lost a race to an
// allocation a few times.
func (r *Repair) RunOnce(ctx context.Context) error {
	ipsOf := func(ctx context.Context) ([]string, error) {
		svcs, err := r.list(ctx)
		var out []string
		for _, s := range svcs {
			out = append(out, clusterIPsOf(s)...)
		}
		return out, err
	}
	portsOf := func(ctx context.Context) ([]string, error) {
		svcs, err := r.list(ctx)
		var out []string
		for _, s := range svcs {
			out = append(out, nodePortsOf(s)...)
		}
		return out, err
	}
	return errors.Join(r.retry(ctx, r.ips, ipsOf), r.retry(ctx, r.ports, portsOf))
}

func (r *Repair) retry(ctx context.Context, rp *allocator.Repairer, used func(context.Context) ([]string, error)) error {
	var err error
	for range 5 {
		if _, err = rp.RunOnce(ctx, used); !errors.Is(err, allocator.ErrConflict) {
			return err
		}
	}
	return err
}

// Run repairs every interval until ctx ends.
func (r *Repair) Run(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultRepairInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := r.RunOnce(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("service allocation repair failed; retrying next period", "err", err)
		}
	}
}
