package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
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

// TestHardenDuringStart: Harden does not wait for a start under way (the
// namespace probe or the helper's launch, begun before it: issue 19); the
// process stays dumpable until that start ends, and is not dumpable after.
func TestHardenDuringStart(t *testing.T) {
	if os.Getenv("FLOWER_HARDEN_DURING") == "1" {
		inStart, release := make(chan struct{}), make(chan struct{})
		done := make(chan error)
		go func() {
			done <- withDumpable(func() error {
				close(inStart)
				<-release
				return nil
			})
		}()
		<-inStart
		_ = Harden(nil) // returns while the start is under way, or the test times out
		during, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		close(release)
		<-done
		after, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		fmt.Printf("dumpable during %d after %d\n", during, after)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHardenDuringStart$", "-test.v", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), "FLOWER_HARDEN_DURING=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "dumpable during 1 after 0") {
		t.Fatalf("%v\n%s", err, out)
	}
}
