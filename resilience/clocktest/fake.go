// Package clocktest provides a fake clock for tests that must never sleep.
// Time moves only when the test says so, and a test can wait — on a
// condition, not a duration — until the code under test is blocked on the
// clock.
package clocktest

import (
	"slices"
	"sync"
	"time"
)

// Fake is a manual clock with Now and After, satisfying resilience.Clock.
// It is safe for concurrent use.
type Fake struct {
	mu      sync.Mutex // guards now, timers and waiters
	now     time.Time
	timers  []timer  // pending, in no particular order
	waiters []waiter // callers of Waiting not yet satisfied
}

type timer struct {
	at time.Time
	ch chan time.Time // buffered: firing never blocks on an absent reader
}

type waiter struct {
	n  int
	ch chan struct{}
}

// New returns a Fake reading now.
func New(now time.Time) *Fake { return &Fake{now: now} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// After returns a channel that receives the fake time once the clock has
// been advanced by d. A non-positive d fires at once and is never pending.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- f.now
		return ch
	}
	f.timers = append(f.timers, timer{at: f.now.Add(d), ch: ch})
	f.wake()
	return ch
}

// Advance moves the clock forward by d and fires every timer now due, the
// earliest first.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	f.fireDue()
}

// AdvanceNext moves the clock to the earliest pending timer, fires it (and
// any due at the same instant) and returns how far the clock moved; 0 when
// nothing is pending. Tests use it to read off exactly how long the code
// chose to wait.
func (f *Fake) AdvanceNext() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.timers) == 0 {
		return 0
	}
	next := slices.MinFunc(f.timers, func(a, b timer) int { return a.at.Compare(b.at) })
	step := next.at.Sub(f.now)
	f.now = next.at
	f.fireDue()
	return step
}

// Pending returns the number of timers not yet fired.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// Waiting returns a channel closed once at least n timers are pending —
// that is, once the code under test is blocked on After. Being a channel,
// it can be selected together with a "done" channel.
func (f *Fake) Waiting(n int) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	if len(f.timers) >= n {
		close(ch)
		return ch
	}
	f.waiters = append(f.waiters, waiter{n: n, ch: ch})
	return ch
}

// WaitForTimers blocks until at least n timers are pending.
func (f *Fake) WaitForTimers(n int) { <-f.Waiting(n) }

// fireDue sends on every timer due by now, earliest first (ties in the
// order After was called). f.mu is held.
func (f *Fake) fireDue() {
	slices.SortStableFunc(f.timers, func(a, b timer) int { return a.at.Compare(b.at) })
	i := 0
	for ; i < len(f.timers) && !f.timers[i].at.After(f.now); i++ {
		f.timers[i].ch <- f.timers[i].at
	}
	f.timers = slices.Delete(f.timers, 0, i)
}

// wake closes the channels of waiters whose condition now holds. f.mu is held.
func (f *Fake) wake() {
	f.waiters = slices.DeleteFunc(f.waiters, func(w waiter) bool {
		if len(f.timers) < w.n {
			return false
		}
		close(w.ch)
		return true
	})
}
