package clocktest_test

import (
	"testing"
	"time"

	"github.com/flower-run/flower/resilience/clocktest"
)

var epoch = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// fired reports whether ch has a value ready, without waiting.
func fired(ch <-chan time.Time) (time.Time, bool) {
	select {
	case t := <-ch:
		return t, true
	default:
		return time.Time{}, false
	}
}

func TestAdvanceFiresDueTimers(t *testing.T) {
	f := clocktest.New(epoch)
	short, long := f.After(time.Second), f.After(time.Minute)

	f.Advance(999 * time.Millisecond)
	if _, ok := fired(short); ok {
		t.Fatal("timer fired before its deadline")
	}
	f.Advance(time.Millisecond)
	if got, ok := fired(short); !ok || !got.Equal(epoch.Add(time.Second)) {
		t.Fatalf("short timer: got %v, %v; want %v, true", got, ok, epoch.Add(time.Second))
	}
	if _, ok := fired(long); ok {
		t.Fatal("long timer fired early")
	}
	if got, want := f.Pending(), 1; got != want {
		t.Fatalf("Pending: got %d, want %d", got, want)
	}
	if got, want := f.Now(), epoch.Add(time.Second); !got.Equal(want) {
		t.Fatalf("Now: got %v, want %v", got, want)
	}
}

func TestAfterNonPositiveFiresAtOnce(t *testing.T) {
	f := clocktest.New(epoch)
	for _, d := range []time.Duration{0, -time.Second} {
		if _, ok := fired(f.After(d)); !ok {
			t.Errorf("After(%v) did not fire at once", d)
		}
	}
	if got := f.Pending(); got != 0 {
		t.Fatalf("Pending: got %d, want 0", got)
	}
}

func TestAdvanceNext(t *testing.T) {
	f := clocktest.New(epoch)
	if got := f.AdvanceNext(); got != 0 {
		t.Fatalf("AdvanceNext with nothing pending: got %v, want 0", got)
	}
	a, b := f.After(8*time.Second), f.After(3*time.Second)
	if got, want := f.AdvanceNext(), 3*time.Second; got != want {
		t.Fatalf("first step: got %v, want %v", got, want)
	}
	if _, ok := fired(b); !ok {
		t.Fatal("earliest timer did not fire")
	}
	if got, want := f.AdvanceNext(), 5*time.Second; got != want {
		t.Fatalf("second step: got %v, want %v", got, want)
	}
	if _, ok := fired(a); !ok {
		t.Fatal("second timer did not fire")
	}
}

func TestWaitingSignalsBlockedCode(t *testing.T) {
	f := clocktest.New(epoch)
	done := make(chan time.Time)
	go func() { done <- <-f.After(time.Hour) }()

	f.WaitForTimers(1) // returns only once the goroutine is blocked on After
	f.Advance(time.Hour)
	if got, want := <-done, epoch.Add(time.Hour); !got.Equal(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	select {
	case <-f.Waiting(0):
	default:
		t.Fatal("Waiting(0) not closed at once")
	}
}
