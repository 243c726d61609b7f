package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// ptyOut collects what a process writes to its terminal.
type ptyOut struct {
	mu      sync.Mutex // guards buf
	buf     bytes.Buffer
	changed chan struct{}
}

func (o *ptyOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	select {
	case o.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (o *ptyOut) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor waits until the terminal shows text, failing past the guard.
func (o *ptyOut) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.After(guard)
	for !strings.Contains(o.String(), text) {
		select {
		case <-o.changed:
		case <-deadline:
			t.Fatalf("the terminal never showed %q:\n%s", text, o.String())
		}
	}
}

// TestEnterAfterPassRechecksOnATerminal: on a real terminal a bare flower
// after a passed verdict shows it and asks; Enter has a fresh judge check
// again, and nothing else runs (issue 11).
func TestEnterAfterPassRechecksOnATerminal(t *testing.T) {
	t.Parallel()
	srv, env := fakeModel(t)
	dir := t.TempDir()
	if r := runFlower(t, dir, env, args(testTask)...); r.code != 0 {
		t.Fatalf("the first run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	n := srv.Count()
	cmd := exec.Command(flowerBin)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TERM=dumb"}, env...)
	f, err := pty.Start(cmd)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer f.Close()
	out := &ptyOut{changed: make(chan struct{}, 1)}
	copied := make(chan struct{})
	go func() { io.Copy(out, f); close(copied) }()
	out.waitFor(t, "Enter = have a fresh judge check it again")
	if !strings.Contains(out.String(), "cat out.txt printed: hi") {
		t.Errorf("the verdict is not shown before the question:\n%s", out)
	}
	if _, err := f.Write([]byte("\r")); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, "✓ verdict passed")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("flower: %v\n%s", err, out)
	}
	f.Close()
	<-copied
	reqs := srv.Requests()[n:]
	if len(reqs) == 0 {
		t.Fatal("Enter after a pass made no model call")
	}
	for _, req := range reqs {
		if step := stepOf(req.System); step != "judge" {
			t.Fatalf("Enter after a pass ran the %s step; only a judge may run", step)
		}
	}
}
