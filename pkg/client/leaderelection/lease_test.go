package leaderelection_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"podline.dev/pkg/client"
	"podline.dev/pkg/client/leaderelection"
	"podline.dev/services/apiserver/apiservertest"
)

// Short timers: a test election settles in well under a second.
const (
	lease = 2 * time.Second
	renew = 1500 * time.Millisecond
	retry = 200 * time.Millisecond
)

type run struct {
	id      string
	started chan struct{}
	done    chan struct{}
	cancel  context.CancelFunc
	mu      sync.Mutex
	leaders []string
}

func (r *run) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.leaders...)
}

func start(t *testing.T, s *apiservertest.Server, id string, release bool) *run {
	t.Helper()
	r := &run{id: id, started: make(chan struct{}), done: make(chan struct{})}
	le, err := leaderelection.New(leaderelection.Config{
		Lock:            leaderelection.NewLeaseLock(s.Conn, "kube-system", "kube-scheduler", id),
		LeaseDuration:   lease,
		RenewDeadline:   renew,
		RetryPeriod:     retry,
		ReleaseOnCancel: release,
		Callbacks: leaderelection.Callbacks{
			OnStartedLeading: func(ctx context.Context) { close(r.started) },
			OnNewLeader: func(l string) {
				r.mu.Lock()
				r.leaders = append(r.leaders, l)
				r.mu.Unlock()
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { defer close(r.done); le.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

func within(t *testing.T, ch chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s: not within %v", what, d)
	}
}

func holder(t *testing.T, s *apiservertest.Server) (string, int32) {
	t.Helper()
	l, err := client.Leases(s.Conn).Get(context.Background(), "kube-system", "kube-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	return l.GetSpec().GetHolderIdentity(), l.GetSpec().GetLeaseTransitions()
}

func TestTwoCandidatesHandOverOnRelease(t *testing.T) {
	s := apiservertest.Start(t)
	a := start(t, s, "node-a_1", true)
	within(t, a.started, 5*time.Second, "a leads")
	b := start(t, s, "node-b_2", true)

	// While a renews, b never leads.
	select {
	case <-b.started:
		t.Fatal("b led while a held the lease")
	case <-time.After(2 * lease):
	}
	if h, tr := holder(t, s); h != "node-a_1" || tr != 1 {
		t.Fatalf("holder = %q (%d transitions), want node-a_1 (1)", h, tr)
	}

	released := time.Now()
	a.cancel()
	within(t, a.done, 5*time.Second, "a stops")
	within(t, b.started, 5*time.Second, "b leads")
	if took := time.Since(released); took >= lease {
		t.Errorf("b took %v to lead after a released, want less than the lease duration %v", took, lease)
	}
	if h, tr := holder(t, s); h != "node-b_2" || tr != 2 {
		t.Fatalf("holder = %q (%d transitions), want node-b_2 (2)", h, tr)
	}
	got := b.seen()
	if len(got) < 2 || got[0] != "node-a_1" || got[len(got)-1] != "node-b_2" {
		t.Errorf("b observed leaders %v, want node-a_1 then node-b_2", got)
	}
}

func TestCandidateTakesOverFromACrashedLeaderAfterTheLeaseDuration(t *testing.T) {
	s := apiservertest.Start(t)
	a := start(t, s, "node-a_1", false)
	within(t, a.started, 5*time.Second, "a leads")
	b := start(t, s, "node-b_2", false)
	time.Sleep(2 * retry) // b observes a's record

	crashed := time.Now()
	a.cancel() // no release: the lease stays held until it expires
	within(t, a.done, 5*time.Second, "a stops")
	within(t, b.started, 5*time.Second, "b leads")
	if took := time.Since(crashed); took < lease-2*retry {
		t.Errorf("b led %v after a stopped renewing, before the lease (%v) expired", took, lease)
	}
	if h, _ := holder(t, s); h != "node-b_2" {
		t.Fatalf("holder = %q, want node-b_2", h)
	}
}

func TestLeaseWritesAreGuardedByResourceVersion(t *testing.T) {
	s := apiservertest.Start(t)
	ctx := context.Background()
	a := leaderelection.NewLeaseLock(s.Conn, "kube-system", "kube-scheduler", "a")
	b := leaderelection.NewLeaseLock(s.Conn, "kube-system", "kube-scheduler", "b")
	if _, err := a.Get(ctx); !errors.Is(err, leaderelection.ErrLockNotFound) {
		t.Fatalf("Get of a missing lease: %v, want ErrLockNotFound", err)
	}
	now := time.Now()
	if err := a.Create(ctx, leaderelection.Record{HolderIdentity: "a", LeaseDurationSeconds: 15, RenewTime: now}); err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, leaderelection.Record{HolderIdentity: "b", LeaseDurationSeconds: 15, RenewTime: now}); !errors.Is(err, leaderelection.ErrLockConflict) {
		t.Fatalf("second Create: %v, want ErrLockConflict", err)
	}
	if _, err := b.Get(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Update(ctx, leaderelection.Record{HolderIdentity: "a", LeaseDurationSeconds: 15, RenewTime: now.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	// b read before a renewed: its write must not land.
	if err := b.Update(ctx, leaderelection.Record{HolderIdentity: "b", LeaseDurationSeconds: 15}); !errors.Is(err, leaderelection.ErrLockConflict) {
		t.Fatalf("stale Update: %v, want ErrLockConflict", err)
	}
	rec, err := b.Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rec.HolderIdentity != "a" || rec.LeaseDurationSeconds != 15 || !rec.RenewTime.Equal(now.Add(time.Second).Truncate(time.Microsecond)) {
		t.Errorf("record = %+v, want a's renewal", rec)
	}
}

func TestDefaultIdentityIsHostnameUnderscoreUUID(t *testing.T) {
	a, b := leaderelection.DefaultIdentity(), leaderelection.DefaultIdentity()
	if a == b {
		t.Error("two identities are equal")
	}
	i := len(a) - 37
	if i < 1 || a[i] != '_' {
		t.Errorf("identity %q is not <hostname>_<uuid>", a)
	}
}
