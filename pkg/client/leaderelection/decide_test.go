package leaderelection

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	lease := 15 * time.Second
	tests := []struct {
		name            string
		cur             Record
		seenAt          time.Time
		now             time.Time
		wantOK          bool
		wantTransitions int32
		wantAcquire     time.Time
	}{
		{
			name:   "an empty record is taken at once",
			cur:    Record{},
			now:    t0,
			wantOK: true, wantTransitions: 1, wantAcquire: t0,
		},
		{
			name:   "a released record (no holder) is taken at once",
			cur:    Record{LeaseDurationSeconds: 1, LeaderTransitions: 4},
			seenAt: t0, now: t0,
			wantOK: true, wantTransitions: 5, wantAcquire: t0,
		},
		{
			name:   "the holder renews and keeps its acquire time and transitions",
			cur:    Record{HolderIdentity: "me", LeaseDurationSeconds: 15, AcquireTime: t0, RenewTime: t0, LeaderTransitions: 2},
			seenAt: t0, now: t0.Add(2 * time.Second),
			wantOK: true, wantTransitions: 2, wantAcquire: t0,
		},
		{
			name:   "another holder's lease observed less than its duration ago is kept",
			cur:    Record{HolderIdentity: "other", LeaseDurationSeconds: 15, LeaderTransitions: 2},
			seenAt: t0, now: t0.Add(14 * time.Second),
			wantOK: false,
		},
		{
			name:   "another holder's lease unchanged for its duration is taken",
			cur:    Record{HolderIdentity: "other", LeaseDurationSeconds: 15, LeaderTransitions: 2},
			seenAt: t0, now: t0.Add(15 * time.Second),
			wantOK: true, wantTransitions: 3, wantAcquire: t0.Add(15 * time.Second),
		},
		{
			name:   "the record's own duration wins over the candidate's",
			cur:    Record{HolderIdentity: "other", LeaseDurationSeconds: 60},
			seenAt: t0, now: t0.Add(30 * time.Second),
			wantOK: false,
		},
		{
			name:   "a renew time far in the past does not matter: only the observation does",
			cur:    Record{HolderIdentity: "other", LeaseDurationSeconds: 15, RenewTime: t0.Add(-time.Hour)},
			seenAt: t0, now: t0.Add(time.Second),
			wantOK: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := decide(tt.cur, observation{record: tt.cur, time: tt.seenAt}, tt.now, "me", lease)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if got.HolderIdentity != "me" || got.LeaseDurationSeconds != 15 || !got.RenewTime.Equal(tt.now) {
				t.Errorf("record = %+v, want holder me, 15s, renewed at now", got)
			}
			if got.LeaderTransitions != tt.wantTransitions {
				t.Errorf("transitions = %d, want %d", got.LeaderTransitions, tt.wantTransitions)
			}
			if !got.AcquireTime.Equal(tt.wantAcquire) {
				t.Errorf("acquireTime = %v, want %v", got.AcquireTime, tt.wantAcquire)
			}
		})
	}
}

func TestDurationSecondsRoundsUp(t *testing.T) {
	for d, want := range map[time.Duration]int32{15 * time.Second: 15, 800 * time.Millisecond: 1, 1500 * time.Millisecond: 2} {
		if got := durationSeconds(d); got != want {
			t.Errorf("durationSeconds(%v) = %d, want %d", d, got, want)
		}
	}
}

func TestReleasedRecordHasNoHolderAndKeepsTransitions(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := released(Record{HolderIdentity: "me", LeaderTransitions: 7}, now)
	if r.HolderIdentity != "" || r.LeaderTransitions != 7 || r.LeaseDurationSeconds != 1 {
		t.Errorf("released = %+v", r)
	}
}

func TestConfigDefaultsAndValidation(t *testing.T) {
	lock := newMemoryLock(&memoryStore{}, "me")
	run := func(context.Context) {}
	le, err := New(Config{Lock: lock, Callbacks: Callbacks{OnStartedLeading: run}})
	if err != nil {
		t.Fatal(err)
	}
	if le.cfg.LeaseDuration != 15*time.Second || le.cfg.RenewDeadline != 10*time.Second || le.cfg.RetryPeriod != 2*time.Second {
		t.Errorf("defaults = %v/%v/%v, want 15s/10s/2s", le.cfg.LeaseDuration, le.cfg.RenewDeadline, le.cfg.RetryPeriod)
	}
	bad := []Config{
		{Callbacks: Callbacks{OnStartedLeading: run}},
		{Lock: newMemoryLock(&memoryStore{}, ""), Callbacks: Callbacks{OnStartedLeading: run}},
		{Lock: lock},
		{Lock: lock, Callbacks: Callbacks{OnStartedLeading: run}, LeaseDuration: 5 * time.Second, RenewDeadline: 10 * time.Second},
		{Lock: lock, Callbacks: Callbacks{OnStartedLeading: run}, RenewDeadline: 2 * time.Second, RetryPeriod: 2 * time.Second},
	}
	for i, cfg := range bad {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %d: err = %v, want ErrInvalidConfig", i, err)
		}
	}
}
