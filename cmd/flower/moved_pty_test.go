//go:build linux || darwin

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestMovedProjectAsksAtATerminal: at a terminal, a bare flower in a
// renamed project asks before it takes the old state over. A no runs
// nothing and leaves the state where it was, with one line saying how to
// adopt it or start anew; a yes continues the cut step: ops.log ends one
// two three (issue 22 item 3).
func TestMovedProjectAsksAtATerminal(t *testing.T) {
	t.Parallel()
	c := movedRun(t)
	c.crashed(c.killAtRequest(7))
	moved := filepath.Join(filepath.Dir(c.dir), "renamed")
	if err := os.Rename(c.dir, moved); err != nil {
		t.Fatal(err)
	}
	c.dir = moved
	answer := func(a string, then ...string) (string, int) {
		cmd := exec.Command(flowerBin)
		cmd.Dir = moved
		cmd.Env = append(append(baseEnv(moved), c.env...), "TERM=dumb")
		tty, err := pty.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		out := &ptyOut{changed: make(chan struct{}, 1)}
		done := make(chan struct{})
		go func() { io.Copy(out, tty); close(done) }()
		out.waitFor(t, "Take them over here? [y/N]")
		io.WriteString(tty, a+"\n")
		for i := 0; i+1 < len(then); i += 2 { // a prompt, then the line typed at it
			out.waitFor(t, then[i])
			io.WriteString(tty, then[i+1]+"\n")
		}
		waited := make(chan error, 1)
		go func() { waited <- cmd.Wait() }()
		select {
		case err = <-waited:
		case <-time.After(guard):
			cmd.Process.Kill()
			err = <-waited
			t.Errorf("flower at the terminal did not end within %v:\n%s", guard, out.String())
		}
		tty.Close()
		<-done
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return out.String(), code
	}
	requests := c.srv.Count()
	out, code := answer("n")
	if code != exitUsage || !strings.Contains(out, "was not adopted") || !strings.Contains(out, "answer y to adopt it") {
		t.Fatalf("a no: exit %d, want %d and how to adopt it\n%s", code, exitUsage, out)
	}
	if c.srv.Count() != requests || readFile(t, filepath.Join(moved, "ops.log")) != "one\ntwo\n" {
		t.Fatalf("a no ran something: %d requests (was %d), ops.log %q", c.srv.Count(), requests, readFile(t, filepath.Join(moved, "ops.log")))
	}
	// The state is adopted before the start-up prompt, which offers the cut run.
	if out, code = answer("y", "continue where it stopped", ""); code != 0 {
		t.Fatalf("a yes: exit %d\n%s", code, out)
	}
	if got := readFile(t, filepath.Join(moved, "ops.log")); got != "one\ntwo\nthree\n" {
		t.Errorf("ops.log after a yes = %q, want one two three", got)
	}
}
