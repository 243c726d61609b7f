package sandbox

import (
	"testing"
)

// TestPrestart: Prestart launches the run's helper before any command
// (issue 19: the launch overlaps the first model request), the commands
// that follow use it instead of starting another, and Close ends it.
func TestPrestart(t *testing.T) {
	needNamespaces(t)
	before := helperStarts.Load()
	s := newSandbox(t, Config{})
	s.Prestart()
	eventually(t, "the prestarted helper runs", func() bool { return helperStarts.Load()-before == 1 })
	s.Prestart() // a second one finds it running
	for range 2 {
		if out, err := run(t, s, "echo ok"); err != nil || out != "ok\n" {
			t.Fatalf("a command under the prestarted helper: %q, %v", out, err)
		}
	}
	if got := helperStarts.Load() - before; got != 1 {
		t.Fatalf("%d helpers started for a prestarted sandbox and two commands, want 1", got)
	}
	exited := s.run.exited
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	default:
		t.Fatal("Close returned with the prestarted helper still running")
	}
}
