package clock

import (
	"sync"
	"time"
)

// Fake is a Clock whose time moves only when told to. It is safe for
// concurrent use: the code under test waits on its timers while the test
// calls Step.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	// added is closed and replaced each time a timer starts waiting.
	added chan struct{}
}

var _ Clock = (*Fake)(nil)

// NewFake returns a Fake clock reading t.
func NewFake(t time.Time) *Fake { return &Fake{now: t, added: make(chan struct{})} }

func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *Fake) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

func (f *Fake) After(d time.Duration) <-chan time.Time { return f.NewTimer(d).C() }

// NewTimer returns a timer that fires when the clock reaches Now()+d; one
// with d <= 0 has fired already.
func (f *Fake) NewTimer(d time.Duration) Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{clock: f, deadline: f.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- f.now
		return t
	}
	f.timers = append(f.timers, t)
	close(f.added)
	f.added = make(chan struct{})
	return t
}

// BlockUntilWaiters waits until at least n timers are waiting: a test calls
// it to know the code under test is parked on its timer before it steps.
func (f *Fake) BlockUntilWaiters(n int) {
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

// Step moves the clock forward by d and fires every timer that is due.
func (f *Fake) Step(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(f.now.Add(d))
}

// SetTime moves the clock to t (which may be earlier) and fires every timer that is due.
func (f *Fake) SetTime(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(t)
}

// Waiters is the number of timers that have not fired or been stopped: a
// test polls it to know that the code under test is waiting before it steps.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

func (f *Fake) setLocked(t time.Time) {
	f.now = t
	pending := f.timers[:0]
	for _, timer := range f.timers {
		if !timer.deadline.After(t) {
			timer.c <- t // buffered, and each timer fires once
			continue
		}
		pending = append(pending, timer)
	}
	clear(f.timers[len(pending):])
	f.timers = pending
}

type fakeTimer struct {
	clock    *Fake
	deadline time.Time
	c        chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	f := t.clock
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, other := range f.timers {
		if other == t {
			f.timers = append(f.timers[:i], f.timers[i+1:]...)
			return true
		}
	}
	return false
}
