package allocator

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
)

// Allocator is one range's allocations behind a Store. Each Update reads
// the snapshot, applies its changes to a Bitmap and writes it back on the
// revision it read; a lost race re-reads and re-applies. Within one process
// updates are also serialized, so only several apiservers ever race.
type Allocator struct {
	rng   Range
	key   string
	store Store
	mu    sync.Mutex
	rnd   *rand.Rand
}

// New returns the allocator of rng stored at key.
func New(rng Range, key string, store Store) *Allocator {
	return &Allocator{rng: rng, key: key, store: store, rnd: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
}

// Range is the allocator's range.
func (a *Allocator) Range() Range { return a.rng }

// Txn is the set of changes of one Update. Its methods work on the bitmap
// read for this attempt; nothing is stored unless the Update's fn returns nil.
type Txn struct {
	rng Range
	bm  *Bitmap
	rnd *rand.Rand
}

// Allocate takes the requested value, or fails with the range's Taken
// error, a *NotInRangeError, or a parse error.
func (t *Txn) Allocate(value string) error {
	off, err := t.rng.Offset(value)
	if err != nil {
		return err
	}
	if !t.bm.Set(off) {
		return t.rng.Taken()
	}
	return nil
}

// Next takes any free value, or fails with ErrFull.
func (t *Txn) Next() (string, error) {
	off, ok := t.bm.Next(t.rnd)
	if !ok {
		return "", ErrFull
	}
	return t.rng.Value(off), nil
}

// Release frees value; a value outside the range is ignored (the range may
// have changed since it was allocated).
func (t *Txn) Release(value string) {
	if off, err := t.rng.Offset(value); err == nil {
		t.bm.Clear(off)
	}
}

// Has reports whether value is allocated.
func (t *Txn) Has(value string) bool {
	off, err := t.rng.Offset(value)
	return err == nil && t.bm.Has(off)
}

// Update runs fn on the current allocations and stores the result, retrying
// fn on a concurrent change. With dryRun nothing is stored. An error from fn
// aborts without storing.
func (a *Allocator) Update(ctx context.Context, dryRun bool, fn func(*Txn) error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		bm, rev, err := a.load(ctx)
		if err != nil {
			return err
		}
		if err := fn(&Txn{rng: a.rng, bm: bm, rnd: a.rnd}); err != nil {
			return err
		}
		if dryRun {
			return nil
		}
		ok, err := a.store.Swap(ctx, a.key, rev, Snapshot{Range: a.rng.String(), Data: bm.Snapshot()})
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// Release frees values in one write.
func (a *Allocator) Release(ctx context.Context, values ...string) error {
	if len(values) == 0 {
		return nil
	}
	return a.Update(ctx, false, func(t *Txn) error {
		for _, v := range values {
			t.Release(v)
		}
		return nil
	})
}

// Used returns the allocated values, for tests and repair logs.
func (a *Allocator) Used(ctx context.Context) ([]string, error) {
	bm, _, err := a.load(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for i := range bm.Size() {
		if bm.Has(i) {
			out = append(out, a.rng.Value(i))
		}
	}
	return out, nil
}

// load reads the bitmap and its revision. A snapshot of another range (the
// flag changed) reads as empty: Repair rebuilds it from the Services.
func (a *Allocator) load(ctx context.Context) (*Bitmap, int64, error) {
	snap, rev, err := a.store.Get(ctx, a.key)
	if err != nil {
		return nil, 0, err
	}
	bm := NewBitmap(a.rng.Size(), a.rng.Static())
	if rev != 0 && snap.Range == a.rng.String() {
		bm.Restore(snap.Data)
	}
	return bm, rev, nil
}

// IsTaken reports whether err says a requested value is in use.
func IsTaken(err error) bool {
	return errors.Is(err, ErrAllocatedIP) || errors.Is(err, ErrAllocatedPort)
}
