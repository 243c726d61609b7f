//go:build linux || darwin

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"

	"github.com/flower-run/flower/model/modeltest"
)

const ptyCols = 160

// onPty starts flower on a pseudo-terminal of ptyCols columns, as a person
// does, with the fake model's environment.
func onPty(t *testing.T, dir string, env []string, args ...string) (*os.File, *watched, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(flowerBin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TERM=xterm-256color"}, env...)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: ptyCols})
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	out, done := newWatched(), make(chan struct{})
	go func() { io.Copy(out, tty); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); tty.Close(); <-done })
	return tty, out, done
}

// rowsWith are the rows of the screen holding text.
func rowsWith(s *screen, text string) []string {
	var rows []string
	for _, l := range s.Lines() {
		if strings.Contains(l, text) {
			rows = append(rows, l)
		}
	}
	return rows
}

// TestTypingWhileAToolRunsKeepsItsOwnLine: a line typed on the terminal
// while a Bash call runs echoes on a line of its own, never after the
// spinner's text ("running Bashuse British spelling"), and the spinner
// leaves no row behind (issue 23 item 4).
func TestTypingWhileAToolRunsKeepsItsOwnLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	_, env := fakeModelWith(t, func(r *modeltest.Request) modeltest.Turn {
		if stepOf(r.System) != "work" {
			return play(r)
		}
		if _, results := lastPrompt(r.Messages); len(results) == 0 {
			return bashTurn("cat fifo")
		}
		return modeltest.Turn{Fault: &modeltest.Fault{Status: 400, Message: "test: one call only"}}
	})
	tty, out, done := onPty(t, dir, env, "--timeout", "0", "write a greeting file")
	if !out.waitFor("running Bash", done) {
		t.Fatalf("no spinner while Bash runs:\n%q", out.String())
	}
	const typed = "use British spelling"
	if _, err := tty.Write([]byte(typed + "\r")); err != nil {
		t.Fatal(err)
	}
	if !out.waitFor("✉ noted", done) {
		t.Fatalf("the typed line was not taken as a note:\n%q", out.String())
	}
	for { // the spinner is drawn again after the note's line
		got, changed := out.snapshot()
		if i := strings.Index(got, "✉ noted"); strings.Contains(got[i:], "running Bash") {
			break
		}
		select {
		case <-changed:
		case <-done:
			t.Fatalf("no spinner after the note:\n%q", out.String())
		}
	}
	s := newScreen(ptyCols, out.String())
	if rows := rowsWith(s, "use British"); len(rows) != 1 || strings.TrimSpace(rows[0]) != typed {
		t.Errorf("the typed line is not on a line of its own: %q\nscreen:\n%s", rows, s)
	}
	if rows := rowsWith(s, "running Bash"); len(rows) != 1 || !strings.HasSuffix(rows[0], "running Bash") {
		t.Errorf("spinner rows %q, want the one spinner\nscreen:\n%s", rows, s)
	}
	if err := os.WriteFile(fifo, []byte("done\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	<-done
	s = newScreen(ptyCols, out.String())
	t.Logf("screen:\n%s", s)
	if rows := rowsWith(s, "running Bash"); len(rows) != 0 {
		t.Errorf("the spinner left rows behind: %q\nscreen:\n%s", rows, s)
	}
	if rows := rowsWith(s, "use British"); len(rows) != 1 {
		t.Errorf("the typed line shows %d times\nscreen:\n%s", len(rows), s)
	}
}

// TestAnswerShowsOnce: a question answered on the terminal (a number picks
// its option) shows the question once and the recorded answer once, in
// place of the typed line (issue 23 item 4).
func TestAnswerShowsOnce(t *testing.T) {
	t.Parallel()
	const question = "Which colour should the header be?"
	_, env := fakeModelWith(t, func(r *modeltest.Request) modeltest.Turn {
		if r.N > 1 {
			return modeltest.Turn{Fault: &modeltest.Fault{Status: 400, Message: "test: one call only"}}
		}
		return call("One question first.", "ask", map[string]any{"question": question, "options": []string{"red", "navy blue"}})
	})
	tty, out, done := onPty(t, t.TempDir(), env, "write a greeting file")
	if !out.waitFor("(type your answer and press Enter)", done) {
		t.Fatalf("no question:\n%q", out.String())
	}
	if _, err := tty.Write([]byte("2\r")); err != nil {
		t.Fatal(err)
	}
	<-done // the model's next call fails: flower ends
	s := newScreen(ptyCols, out.String())
	t.Logf("screen:\n%s", s)
	if rows := rowsWith(s, "header be"); len(rows) != 1 {
		t.Errorf("the question shows %d times: %q\nscreen:\n%s", len(rows), rows, s)
	}
	if rows := rowsWith(s, "navy blue"); len(rows) != 2 || strings.TrimSpace(rows[1]) != "↳ answered: navy blue" {
		t.Errorf("want the option, then the answer once: %q\nscreen:\n%s", rows, s)
	}
	for _, l := range s.Lines() {
		if strings.TrimSpace(l) == "2" {
			t.Errorf("the typed 2 stays beside the answer it gave\nscreen:\n%s", s)
		}
	}
}
