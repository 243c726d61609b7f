package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
)

// smallDisk mounts a tmpfs of size bytes on a new directory: a real
// filesystem that fills up. It needs root; under CI=true its absence
// fails the test instead of skipping it.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a tmpfs (CI runs as root): %v", err)
		}
		t.Skipf("no tmpfs to fill (needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file in dir until its filesystem is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		if _, err := f.Write(block); errors.Is(err, syscall.ENOSPC) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []int{4096, 512, 1} { // the last bytes too
		for {
			if _, err := f.Write(block[:n]); err != nil {
				break
			}
		}
	}
	return path
}

// fullDuringCat runs flower with args in dir until its Bash call "cat
// fifo" (the fake model's) blocks, fills runDir's disk, lets the call end
// and waits for flower. Then it gives the space back and turns the fifo
// into a file, for the cut call that the next start runs again (issue 22).
func fullDuringCat(t *testing.T, dir, runDir string, env []string, args ...string) ran {
	t.Helper()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startFlower(t, dir, env, false, args...)
	p.waitOutput("[Bash] cat fifo")
	filler := fill(t, runDir)
	if err := os.WriteFile(fifo, []byte("the fifo spoke\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := p.wait()
	if r.code == 0 {
		t.Fatalf("flower went on with a full disk\n%s", r.stdout)
	}
	for _, path := range []string{filler, fifo} {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, fifo, "the file spoke\n")
	return r
}

// TestFullDiskDuringARun: the run dir's disk fills up while a Bash call
// runs; flower stops with one line naming the directory, its free space
// and the fix (--run-dir, XDG_STATE_HOME), as at start; once there is
// space again the session resumes with nothing lost (issue 23 item 3).
func TestFullDiskDuringARun(t *testing.T) {
	t.Parallel()
	runDir := smallDisk(t, "8m")
	dir := t.TempDir()
	_, env := fakeModelWith(t, func(r *modeltest.Request) modeltest.Turn {
		if _, results := lastPrompt(r.Messages); len(results) == 0 && len(r.Messages) == 1 {
			return bashTurn("cat fifo")
		}
		return modeltest.Turn{Text: "All done."}
	})
	r := fullDuringCat(t, dir, runDir, env, "once", "-r", runDir, "wait for the fifo")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1]
	if len(lines) != 1 {
		t.Errorf("want one line on stderr:\n%s", r.stderr)
	}
	for _, want := range []string{runDir, "is full", "free)", "--run-dir", "XDG_STATE_HOME"} {
		if !strings.Contains(last, want) {
			t.Errorf("the last line lacks %q: %s", want, last)
		}
	}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(last, "commit: commit:") {
		t.Errorf("a stack trace or a repeated phrase:\n%s", r.stderr)
	}
	m := sessionLine.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no session line:\n%s", r.stdout)
	}
	id := m[1]
	r = runFlower(t, dir, env, "once", "-r", runDir, "--resume", id)
	if r.code != 0 || !strings.Contains(r.stdout, "All done.") {
		t.Fatalf("the resume: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	show := runFlower(t, dir, nil, "show", "-r", runDir, id)
	if !strings.Contains(show.stdout, "wait for the fifo") || !strings.Contains(show.stdout, `"cat fifo"`) ||
		!strings.Contains(show.stdout, "the file spoke") {
		t.Errorf("the session lost its start:\n%s", show.stdout)
	}
}

// TestFullDiskDuringAWake: the same through flower "task": the work
// step's commit meets the full disk, the wake stops with the one line, and
// the next wake continues the work step, the earlier steps kept.
func TestFullDiskDuringAWake(t *testing.T) {
	t.Parallel()
	runDir := smallDisk(t, "8m")
	dir := t.TempDir()
	_, env := fakeModelWith(t, func(r *modeltest.Request) modeltest.Turn {
		switch _, results := lastPrompt(r.Messages); {
		case stepOf(r.System) != "work":
			return play(r)
		case len(results) == 0:
			return bashTurn("cat fifo")
		}
		return modeltest.Turn{Text: "Done."}
	})
	r := fullDuringCat(t, dir, runDir, env, "-r", runDir, "--timeout", "0", testTask)
	for _, want := range []string{runDir, "is full", "free)", "--run-dir", "XDG_STATE_HOME", "run flower again here"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	r = runFlower(t, dir, env, "-r", runDir, "--timeout", "0")
	for _, want := range []string{"finishing run", "at work · brief confirmed", "3/4 work (connected)", "(Bash cat fifo", "Done.", "4/4 judge"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the next wake lacks %q:\n%s\n%s", want, r.stdout, r.stderr)
		}
	}
}
