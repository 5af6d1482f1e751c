package clock

import (
	"testing"
	"time"
)

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func fired(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestFakeTimerFiresWhenTheClockReachesItsDeadline(t *testing.T) {
	f := NewFake(epoch)
	timer := f.NewTimer(time.Second)
	if f.Waiters() != 1 {
		t.Fatalf("waiters = %d, want 1", f.Waiters())
	}
	f.Step(999 * time.Millisecond)
	if fired(timer.C()) {
		t.Fatal("timer fired before its deadline")
	}
	f.Step(time.Millisecond)
	if !fired(timer.C()) {
		t.Fatal("timer did not fire at its deadline")
	}
	if f.Waiters() != 0 || timer.Stop() {
		t.Fatal("a fired timer is still pending")
	}
}

func TestFakeStoppedTimerNeverFires(t *testing.T) {
	f := NewFake(epoch)
	timer := f.NewTimer(time.Second)
	if !timer.Stop() {
		t.Fatal("Stop of a pending timer reported false")
	}
	f.Step(time.Hour)
	if fired(timer.C()) {
		t.Fatal("stopped timer fired")
	}
}

func TestFakeTimerWithNoDelayHasFired(t *testing.T) {
	f := NewFake(epoch)
	if !fired(f.After(0)) {
		t.Fatal("After(0) did not fire at once")
	}
	if got := f.Since(epoch.Add(-time.Minute)); got != time.Minute {
		t.Fatalf("Since = %v, want 1m", got)
	}
}
