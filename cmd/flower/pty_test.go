//go:build linux || darwin

package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/flower-run/flower/model/modeltest"
)

// TestTerminalStreamsAndSpins runs flower in a pseudo-terminal, as a person
// does: while the model has not answered, a spinner line names the step
// and what it waits on; the answer's text shows piece by piece while it
// streams, before the answer is complete (issue 11).
func TestTerminalStreamsAndSpins(t *testing.T) {
	t.Parallel()
	answer := "Streaming the first words of a long answer, piece by piece."
	spun, partial := make(chan struct{}), make(chan struct{}) // closed by the test when it saw each
	var out *watched
	_, env := fakeModelWith(t, func(r *modeltest.Request) modeltest.Turn {
		if r.N > 1 {
			return modeltest.Turn{Fault: &modeltest.Fault{Status: 400, Message: "test: one answer only"}}
		}
		return modeltest.Turn{Text: answer, Pace: func(ctx context.Context, n int) {
			switch n {
			case 0: // nothing streamed yet: the spinner must be turning
				wait(ctx, spun)
			case 2: // two pieces out, the rest held back
				wait(ctx, partial)
			}
		}}
	})
	cmd := exec.Command(flowerBin, "--timeout", "0", "write a greeting file")
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + cmd.Dir, "TERM=xterm-256color"}, env...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	out = newWatched()
	go func() { io.Copy(out, tty); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); tty.Close(); <-done })

	if !out.waitFor("waiting on the model", done) || !strings.Contains(out.String(), "clarify · ") {
		t.Fatalf("no spinner while waiting:\n%q", out.String())
	}
	if !strings.Contains(out.String(), "· model claude-sonnet-4-6 · Anthropic API at ") {
		t.Errorf("the banner does not name the model and provider:\n%q", out.String())
	}
	close(spun)
	if !out.waitFor("Streaming the first", done) {
		t.Fatalf("no streamed text:\n%q", out.String())
	}
	if strings.Contains(out.String(), answer) {
		t.Fatalf("the whole answer is shown while the stream is held:\n%q", out.String())
	}
	close(partial)
	if !out.waitFor(answer, done) {
		t.Fatalf("the answer did not complete:\n%q", out.String())
	}
	t.Logf("terminal:\n%q", out.String())
	if n := strings.Count(out.String(), "piece by piece."); n != 1 {
		t.Errorf("the end of the answer is shown %d times:\n%q", n, out.String())
	}
}

// wait blocks until ch is closed or ctx ends (the client went away).
func wait(ctx context.Context, ch <-chan struct{}) {
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// On a terminal that takes no escapes (TERM=dumb), or with NO_COLOR, the
// output is plain lines: no colour, no spinner (issue 11).
func TestTerminalPlainWhenAskedTo(t *testing.T) {
	t.Parallel()
	for _, env := range []string{"TERM=dumb", "NO_COLOR=1"} {
		t.Run(env, func(t *testing.T) {
			_, fenv := fakeModelWith(t, func(r *modeltest.Request) modeltest.Turn {
				if r.N > 1 {
					return modeltest.Turn{Fault: &modeltest.Fault{Status: 400, Message: "test: one answer only"}}
				}
				return modeltest.Turn{Text: "A plain answer."}
			})
			cmd := exec.Command(flowerBin, "--timeout", "0", "write a greeting file")
			cmd.Dir = t.TempDir()
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + cmd.Dir, "TERM=xterm", env}, fenv...)
			tty, err := pty.Start(cmd)
			if err != nil {
				t.Fatal(err)
			}
			out, done := newWatched(), make(chan struct{})
			go func() { io.Copy(out, tty); close(done) }()
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); tty.Close(); <-done })
			cmd.Wait() // the second request fails: flower ends
			<-done
			got := out.String()
			if !strings.Contains(got, "A plain answer.") || strings.Contains(got, "\x1b[") || strings.Contains(got, "waiting on the model") {
				t.Errorf("output with %s:\n%q", env, got)
			}
		})
	}
}
