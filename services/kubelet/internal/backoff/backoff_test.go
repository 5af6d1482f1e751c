package backoff

import (
	"testing"
	"time"

	"podline.dev/pkg/clock"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestBackoffDoublesFromTenSecondsToFiveMinutes(t *testing.T) {
	c := clock.NewFake(t0)
	b := New(c, DefaultInitial, DefaultMax)
	var got []time.Duration
	for range 8 {
		b.Next("web", c.Now())
		got = append(got, b.Get("web"))
		c.Step(time.Second)
	}
	want := []time.Duration{10, 20, 40, 80, 160, 300, 300, 300}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("step %d: %v, want %v (all: %v)", i, got[i], want[i]*time.Second, got)
		}
	}
}

func TestIsInBackOffSinceCountsFromTheLastExit(t *testing.T) {
	c := clock.NewFake(t0)
	b := New(c, DefaultInitial, DefaultMax)
	if b.IsInBackOffSince("web", c.Now()) {
		t.Fatal("a key never backed off is in backoff")
	}
	exited := c.Now()
	b.Next("web", exited) // restarted once: 10 s
	c.Step(9 * time.Second)
	if !b.IsInBackOffSince("web", exited) {
		t.Fatal("9 s after the exit is still within a 10 s backoff")
	}
	if r := b.Remaining("web", exited); r != time.Second {
		t.Fatalf("Remaining = %v, want 1s", r)
	}
	c.Step(time.Second)
	if b.IsInBackOffSince("web", exited) {
		t.Fatal("10 s after the exit the backoff has passed")
	}
}

func TestBackoffExpiresAfterTwiceTheMaximumQuiet(t *testing.T) {
	c := clock.NewFake(t0)
	b := New(c, DefaultInitial, DefaultMax)
	for range 5 {
		b.Next("web", c.Now())
	}
	c.Step(2*DefaultMax + time.Second)
	b.Next("web", c.Now())
	if got := b.Get("web"); got != DefaultInitial {
		t.Fatalf("after a long quiet the backoff restarts at %v, got %v", DefaultInitial, got)
	}
	c.Step(2*DefaultMax + time.Second)
	b.GC()
	if b.Get("web") != 0 {
		t.Fatal("GC kept an idle entry")
	}
}
