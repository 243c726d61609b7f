package builtin

import (
	"testing"
	"time"

	"github.com/flower-run/flower/internal/proctest"
)

// eventually polls cond until it holds or the deadline passes. Polling a
// condition is how these tests wait: no fixed sleeps.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !poll(10*time.Second, cond) {
		t.Fatalf("timed out waiting until %s", what)
	}
}

// poll reports whether cond came true within d; safe off the test goroutine.
func poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// uniqueSleep is a sleep duration no other process uses.
var uniqueSleep = proctest.UniqueSleep

// withArg lists the live processes one of whose arguments is arg.
var withArg = proctest.WithArg
