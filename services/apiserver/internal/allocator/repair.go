package allocator

import (
	"context"
	"log/slog"
)

// DefaultLeakRepairs is how many repairs in a row must see an allocated
// value unused before it is freed, as in kube-apiserver: a Service being
// created has its IP allocated before it is stored, and must not lose it to
// a repair that listed the Services in between.
const DefaultLeakRepairs = 3

// Repairer rebuilds an allocator's bitmap from the values the stored
// objects use. It keeps, between runs, how often it saw each leak.
type Repairer struct {
	a         *Allocator
	threshold int
	leaks     map[string]int
	log       *slog.Logger
}

// NewRepairer returns a repairer of a that frees a leak once threshold
// runs saw it (0: DefaultLeakRepairs).
func NewRepairer(a *Allocator, threshold int, log *slog.Logger) *Repairer {
	if threshold <= 0 {
		threshold = DefaultLeakRepairs
	}
	if log == nil {
		log = slog.Default()
	}
	return &Repairer{a: a, threshold: threshold, leaks: map[string]int{}, log: log}
}

// RepairResult says what a run changed.
type RepairResult struct {
	// Freed are leaks released by this run.
	Freed []string
	// Restored are values in use that the bitmap had lost.
	Restored []string
	// Duplicate are values two objects use; OutOfRange values outside the range.
	Duplicate, OutOfRange []string
}

// RunOnce reads the snapshot, then calls used for the values in use
// (listed after the snapshot was read), and writes the rebuilt bitmap on
// the snapshot's revision. A concurrent allocation makes it fail with
// ErrConflict; the next run tries again.
func (r *Repairer) RunOnce(ctx context.Context, used func(context.Context) ([]string, error)) (RepairResult, error) {
	var res RepairResult
	old, rev, err := r.a.load(ctx)
	if err != nil {
		return res, err
	}
	values, err := used(ctx)
	if err != nil {
		return res, err
	}
	rng := r.a.rng
	fresh := NewBitmap(rng.Size(), rng.Static())
	for _, v := range values {
		off, err := rng.Offset(v)
		if err != nil {
			res.OutOfRange = append(res.OutOfRange, v)
			continue
		}
		if !fresh.Set(off) {
			res.Duplicate = append(res.Duplicate, v)
			continue
		}
		if !old.Has(off) {
			res.Restored = append(res.Restored, v)
		}
	}
	seen := map[string]bool{}
	for off := range old.Size() {
		if !old.Has(off) || fresh.Has(off) {
			continue
		}
		v := rng.Value(off)
		seen[v] = true
		r.leaks[v]++
		if r.leaks[v] < r.threshold {
			fresh.Set(off) // keep it until it has been unused long enough
			continue
		}
		res.Freed = append(res.Freed, v)
	}
	for v := range r.leaks {
		if !seen[v] {
			delete(r.leaks, v)
		}
	}
	ok, err := r.a.store.Swap(ctx, r.a.key, rev, Snapshot{Range: rng.String(), Data: fresh.Snapshot()})
	if err != nil {
		return RepairResult{}, err
	}
	if !ok {
		return RepairResult{}, ErrConflict
	}
	for _, v := range res.Freed {
		delete(r.leaks, v)
	}
	r.report(res)
	return res, nil
}

func (r *Repairer) report(res RepairResult) {
	key := r.a.key
	if len(res.Freed) > 0 {
		r.log.Info("repair: released leaked allocations", "range", key, "values", res.Freed)
	}
	if len(res.Restored) > 0 {
		r.log.Warn("repair: allocations in use were missing from the range and are restored", "range", key, "values", res.Restored)
	}
	if len(res.Duplicate) > 0 {
		r.log.Error("repair: values allocated to more than one Service", "range", key, "values", res.Duplicate)
	}
	if len(res.OutOfRange) > 0 {
		r.log.Warn("repair: values in use lie outside the range (the range changed?)", "range", key, "values", res.OutOfRange)
	}
}
