package leaderelection

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"podline.dev/pkg/clock"
)

const (
	testLease = 15 * time.Second
	testRenew = 10 * time.Second
	testRetry = 2 * time.Second
)

// candidate runs one elector on a fake clock and records its callbacks.
type candidate struct {
	le      *LeaderElector
	leading atomic.Bool
	started chan struct{}
	stopped chan struct{}
	done    chan struct{}
	cancel  context.CancelFunc
}

func runCandidate(t *testing.T, store *memoryStore, id string, clk clock.Clock, release bool) *candidate {
	t.Helper()
	c := &candidate{started: make(chan struct{}), stopped: make(chan struct{}), done: make(chan struct{})}
	le, err := New(Config{
		Lock:            newMemoryLock(store, id),
		LeaseDuration:   testLease,
		RenewDeadline:   testRenew,
		RetryPeriod:     testRetry,
		Clock:           clk,
		ReleaseOnCancel: release,
		Callbacks: Callbacks{
			OnStartedLeading: func(ctx context.Context) {
				c.leading.Store(true)
				close(c.started)
				<-ctx.Done()
				c.leading.Store(false)
			},
			OnStoppedLeading: func() { close(c.stopped) },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.le = le
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go func() { defer close(c.done); le.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-c.done })
	return c
}

// advance steps the fake clock by d once some goroutine waits on it.
func advance(t *testing.T, clk *clock.Fake, waiters int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for clk.Waiters() < waiters {
		if time.Now().After(deadline) {
			t.Fatalf("nobody waits on the clock (want %d waiters)", waiters)
		}
		time.Sleep(time.Millisecond)
	}
	clk.Step(d)
}

func waitClosed(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestFirstCandidateTakesAMissingLeaseAtOnce(t *testing.T) {
	store := &memoryStore{}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a := runCandidate(t, store, "a", clk, false)
	waitClosed(t, a.started, "a to lead")
	r, ok := store.get()
	if !ok || r.HolderIdentity != "a" || r.LeaseDurationSeconds != 15 || r.LeaderTransitions != 1 {
		t.Fatalf("record = %+v, want held by a for 15s", r)
	}
	if !a.le.IsLeader() || a.le.GetLeader() != "a" {
		t.Errorf("IsLeader = %v, GetLeader = %q", a.le.IsLeader(), a.le.GetLeader())
	}
}

func TestSecondCandidateWaitsForTheLeaseToExpireOnItsOwnClock(t *testing.T) {
	store := &memoryStore{}
	clkA := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a := runCandidate(t, store, "a", clkA, false)
	waitClosed(t, a.started, "a to lead")
	a.cancel() // a crashes: it does not release
	waitClosed(t, a.done, "a to stop")

	// b's clock is an hour ahead: a's renewTime means nothing to it; only
	// how long b has seen the record unchanged does.
	clkB := clock.NewFake(time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC))
	b := runCandidate(t, store, "b", clkB, false)
	elapsed := time.Duration(0)
	for elapsed < testLease-testRetry*3 {
		advance(t, clkB, 1, testRetry)
		elapsed += testRetry
		select {
		case <-b.started:
			t.Fatalf("b took the lease after %v, before it expired", elapsed)
		case <-time.After(5 * time.Millisecond):
		}
	}
	for i := 0; i < 10; i++ {
		advance(t, clkB, 1, testRetry*3)
		select {
		case <-b.started:
			r, _ := store.get()
			if r.HolderIdentity != "b" || r.LeaderTransitions != 2 {
				t.Fatalf("record = %+v, want b and 2 transitions", r)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("b never took the expired lease")
}

func TestLeaderStopsWhenItCannotRenewWithinTheDeadline(t *testing.T) {
	store := &memoryStore{}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a := runCandidate(t, store, "a", clk, false)
	waitClosed(t, a.started, "a to lead")
	store.setFail(true)
	for i := 0; i < 20; i++ {
		select {
		case <-a.stopped:
			if a.leading.Load() {
				// OnStartedLeading's ctx is cancelled right after Run's loop ends.
				time.Sleep(10 * time.Millisecond)
			}
			if a.leading.Load() {
				t.Error("the leading goroutine's context was not cancelled")
			}
			if clk.Since(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) > testRetry+testRenew+testRetry {
				t.Errorf("gave up after %v, want within retry+renewDeadline", clk.Since(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
			}
			return
		case <-time.After(5 * time.Millisecond):
		}
		advance(t, clk, 1, testRetry)
	}
	t.Fatal("a kept leading although it could not renew")
}

func TestReleaseOnCancelClearsTheHolder(t *testing.T) {
	store := &memoryStore{}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a := runCandidate(t, store, "a", clk, true)
	waitClosed(t, a.started, "a to lead")
	a.cancel()
	waitClosed(t, a.done, "a to stop")
	r, _ := store.get()
	if r.HolderIdentity != "" || r.LeaderTransitions != 1 {
		t.Fatalf("record after release = %+v, want no holder", r)
	}
	if a.le.IsLeader() {
		t.Error("IsLeader after release")
	}
}
