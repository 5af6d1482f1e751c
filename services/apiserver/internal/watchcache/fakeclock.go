package watchcache

import (
	"sync"
	"time"
)

// FakeClock is a Clock that moves only when Step is called, for tests of
// the cache and of code built on it. It is safe for concurrent use.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	// added is closed (and replaced) whenever a timer is created, so
	// BlockUntilTimers can wait without polling.
	added chan struct{}
}

var _ Clock = (*FakeClock)(nil)

// NewFakeClock returns a FakeClock reading now.
func NewFakeClock(now time.Time) *FakeClock {
	return &FakeClock{now: now, added: make(chan struct{})}
}

// Now returns the clock's current time.
func (f *FakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer that fires when Step moves the clock d past now.
func (f *FakeClock) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{clock: f, when: f.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- f.now
		return t
	}
	f.timers = append(f.timers, t)
	close(f.added)
	f.added = make(chan struct{})
	return t
}

// Step moves the clock forward by d and fires every timer that is due.
func (f *FakeClock) Step(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	pending := f.timers[:0]
	for _, t := range f.timers {
		if t.when.After(f.now) {
			pending = append(pending, t)
			continue
		}
		t.c <- f.now
	}
	clear(f.timers[len(pending):])
	f.timers = pending
}

// Timers is the number of timers waiting to fire.
func (f *FakeClock) Timers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// BlockUntilTimers waits until at least n timers are waiting to fire: a
// test calls it to know that the code under test is parked on its timer
// before it steps the clock.
func (f *FakeClock) BlockUntilTimers(n int) {
	for {
		f.mu.Lock()
		if len(f.timers) >= n {
			f.mu.Unlock()
			return
		}
		added := f.added
		f.mu.Unlock()
		<-added
	}
}

type fakeTimer struct {
	clock *FakeClock
	when  time.Time
	c     chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

// Stop removes the timer; it reports whether the timer was still pending.
func (t *fakeTimer) Stop() bool {
	f := t.clock
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, p := range f.timers {
		if p == t {
			f.timers = append(f.timers[:i], f.timers[i+1:]...)
			return true
		}
	}
	return false
}
