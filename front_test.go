package flower_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/wake"
	"github.com/flower-run/flower/workflow/starter"
)

// recorder is a front end of the test's own: it keeps the events, what
// Attach was given, and when the run ended relative to detach.
type recorder struct {
	mu     sync.Mutex
	events int
	run    flower.WakeRun
	order  []string
	over   bool // call StartOver at Attach
}

func (r *recorder) front() flower.Front {
	return flower.Front{
		Sink: func(event.Event) { r.mu.Lock(); r.events++; r.mu.Unlock() },
		Attach: func(_ context.Context, run flower.WakeRun) (func(), error) {
			r.mu.Lock()
			r.run = run
			r.order = append(r.order, "attach")
			r.mu.Unlock()
			if r.over {
				run.StartOver()
			}
			return func() { r.mu.Lock(); r.order = append(r.order, "detach"); r.mu.Unlock() }, nil
		},
	}
}

// wakeOnce opens ws, prepares a wake with phrase and wakes it with rec.
func wakeOnce(t *testing.T, ws, runDir, phrase string, rec *recorder) (flower.Woke, string) {
	t.Helper()
	ctx := context.Background()
	var out strings.Builder
	h, err := flower.Open(ctx, flower.Options{Workspace: ws, RunDir: runDir, Model: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	plan, err := h.Prepare(ctx, wake.Options{Phrase: phrase})
	if err != nil {
		t.Fatal(err)
	}
	w, err := h.Wake(ctx, plan, flower.WakeOptions{Front: rec.front(), Out: &out,
		Ended: func(flower.Woke) error { rec.order = append(rec.order, "ended"); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return w, out.String()
}

// TestWake: Host.Wake is flower [TASK]'s wake for any front end (moved
// from cmd/flower's wakeWith, issue 19): the banner on Out, the front end
// attached with the wake's number and store, every event on its sink,
// the verdict told to Ended before the front end is detached; /new
// (StartOver) stops the next wake and archives the thread.
func TestWake(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ws, runDir := t.TempDir(), filepath.Join(t.TempDir(), "state")
	rec := &recorder{}
	w, out := wakeOnce(t, ws, runDir, "write hello.txt", rec)
	if !w.Outcome.Passed || w.Archived || w.Stopped {
		t.Fatalf("the demo run did not pass: %+v\n%s", w, out)
	}
	if !strings.HasPrefix(out, "-> starting in ") || !strings.Contains(out, "demo") {
		t.Errorf("no banner first:\n%s", out)
	}
	if rec.run.Number != 1 || rec.run.Store == nil || rec.run.Banner == "" || rec.events == 0 {
		t.Errorf("the front end got %+v and %d events", rec.run, rec.events)
	}
	if got := strings.Join(rec.order, " "); got != "attach ended detach" {
		t.Errorf("order %q, want attach ended detach", got)
	}
	rec2 := &recorder{over: true}
	w, out = wakeOnce(t, ws, runDir, "also say goodbye", rec2)
	if !w.Archived || rec2.run.Number != 2 || !strings.Contains(out, "archived this thread under") {
		t.Errorf("StartOver: %+v\n%s", w, out)
	}
	if _, err := os.Stat(filepath.Join(ws, starter.ArchiveDir)); err != nil {
		t.Errorf("no archive: %v", err)
	}
}

// Wake the starter flow (clarify, goals, work, judge) in a workspace with
// a front end of your own: what `flower "task"` does on the terminal and
// `flower serve` on its Web page.
func ExampleHost_Wake() {
	ws, runDir, done := tempDirs()
	defer done()
	ctx := context.Background()

	h, err := flower.Open(ctx, flower.Options{Workspace: ws, RunDir: runDir, Model: "demo"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	plan, err := h.Prepare(ctx, wake.Options{Phrase: "write hello.txt"})
	if err != nil {
		fmt.Println(err)
		return
	}
	events := 0
	front := flower.Front{
		Sink:   func(event.Event) { events++ },
		Attach: func(ctx context.Context, r flower.WakeRun) (func(), error) { return func() {}, nil },
	}
	w, err := h.Wake(ctx, plan, flower.WakeOptions{Front: front, Out: io.Discard})
	_, statErr := os.Stat(filepath.Join(ws, "hello.txt"))
	fmt.Printf("passed=%v err=%v hello.txt=%v events=%v\n", w.Outcome.Passed, err, statErr == nil, events > 0)
	// Output: passed=true err=<nil> hello.txt=true events=true
}
