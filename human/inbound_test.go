package human

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/mem"
	"github.com/flower-run/flower/tool"
)

// Inbound records (issue 14): what another process puts in the journal
// reaches the channel of the process that drives the run, exactly once,
// across crashes. A crash is a new Channel and Follower over the same
// store, as in journal_test.go.

var journalKey = store.SideLog("/ws", store.HumanJournal)

// driver is one process's channel over s, restored, with its follower.
type driver struct {
	c           *Channel
	f           *Follower
	dir         string
	mu          sync.Mutex // guards interrupts
	interrupts  []string
	cancelAsked context.CancelFunc
}

func newDriver(t *testing.T, s store.Store, dir string) *driver {
	t.Helper()
	d := &driver{dir: dir}
	d.c = New(Options{Store: s, JournalKey: journalKey, Workbench: dir, Timeout: Forever})
	if err := d.c.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	f, err := d.c.Follow(FollowOptions{Interrupt: func(text string) {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.interrupts = append(d.interrupts, text)
	}})
	if err != nil {
		t.Fatal(err)
	}
	d.f = f
	return d
}

func (d *driver) pass(t *testing.T) {
	t.Helper()
	if err := d.f.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func (d *driver) interrupted() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.interrupts...)
}

// ask runs the ask tool as call in a goroutine; its context ends with the
// test, as a process that dies never ends it.
func (d *driver) ask(t *testing.T, call string) <-chan outcome {
	ctx, cancel := context.WithCancel(tool.WithCall(context.Background(), call))
	d.cancelAsked = cancel
	done, ended := make(chan outcome, 1), make(chan struct{})
	go func() {
		defer close(ended)
		res, err := d.c.Tools()[0].Run(ctx, json.RawMessage(`{"question": "Tabs or spaces?", "options": ["tabs", "spaces"]}`))
		done <- outcome{res, err}
	}()
	// Before the workbench goes: a cut ask still writes its Q&A log.
	t.Cleanup(func() { cancel(); <-ended })
	return done
}

func remote(s store.Store) Remote { return Remote{Store: s, Key: journalKey} }

func records(t *testing.T, s store.Store, typ string) int {
	t.Helper()
	rs, err := (&journal{s: s, key: journalKey}).load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rs {
		if r.Type == typ {
			n++
		}
	}
	return n
}

func TestRemoteAnswerReachesTheWaitingAsk(t *testing.T) {
	s := mem.New()
	d := newDriver(t, s, t.TempDir())
	done := d.ask(t, "call-1")
	if _, err := d.c.NextAsk(watchdog(t)); err != nil {
		t.Fatal(err)
	}
	r := remote(s)
	pending, err := r.Pending(context.Background())
	if err != nil || len(pending) != 1 || pending[0].ID != "q1" || pending[0].Question != "Tabs or spaces?" {
		t.Fatalf("Pending through the store = %+v, %v; want q1", pending, err)
	}
	if ok, err := r.Answer(context.Background(), "q1", "2"); !ok || err != nil {
		t.Fatalf("Answer = %v, %v", ok, err)
	}
	d.pass(t)
	if o := wait(t, done); o.err != nil || o.res.Content != "The person answered:\n\nspaces" {
		t.Fatalf("the ask got %+v, want the answer (option 2 picked)", o)
	}
	if pending, _ := r.Pending(context.Background()); len(pending) != 0 {
		t.Errorf("Pending after the answer = %+v, want none", pending)
	}
	if ok, err := r.Answer(context.Background(), "q1", "tabs"); ok || err != nil {
		t.Errorf("a second answer = %v, %v; want false: no longer waiting", ok, err)
	}
	if _, err := r.Answer(context.Background(), "q7", "x"); !errors.Is(err, ErrNoAsk) {
		t.Errorf("an answer to q7 = %v, want ErrNoAsk", err)
	}
	d.pass(t) // the late answer is nothing
	if n := records(t, s, "settled"); n != 1 {
		t.Errorf("%d settled records, want 1", n)
	}
}

// The driver dies while its question waits; the person answers through
// the store meanwhile; the next driver asks the same call again and gets
// that answer at once; the one after finds the call settled, and the
// answer record is not applied again.
func TestRemoteAnswerAcrossACrash(t *testing.T) {
	s := mem.New()
	dir := t.TempDir()
	first := newDriver(t, s, dir)
	first.ask(t, "call-1")
	if _, err := first.c.NextAsk(watchdog(t)); err != nil {
		t.Fatal(err)
	}
	// first dies here: its ask stays asked in the journal.
	r := remote(s)
	if ok, err := r.Answer(context.Background(), "q1", "tabs"); !ok || err != nil {
		t.Fatalf("Answer while no driver lives = %v, %v", ok, err)
	}
	second := newDriver(t, s, dir)
	second.pass(t) // the answer waits for its call
	if o := wait(t, second.ask(t, "call-1")); o.err != nil || o.res.Content != "The person answered:\n\ntabs" {
		t.Fatalf("the call asked again got %+v, want the answer given meanwhile", o)
	}
	third := newDriver(t, s, dir)
	third.pass(t)
	if o := wait(t, third.ask(t, "call-1")); o.res.Content != "The person answered:\n\ntabs" {
		t.Fatalf("after another crash the call got %+v", o)
	}
	if n := records(t, s, "settled"); n != 1 {
		t.Errorf("%d settled records, want 1: the answer applied once", n)
	}
	// A new call of the third driver waits: the old answer is not its.
	done := third.ask(t, "call-2")
	if _, err := third.c.NextAsk(watchdog(t)); err != nil {
		t.Fatal(err)
	}
	third.pass(t)
	select {
	case o := <-done:
		t.Fatalf("call-2 settled with %+v by another call's answer", o)
	default:
	}
}

func TestRemoteMailOnceAcrossACrash(t *testing.T) {
	s := mem.New()
	dir := t.TempDir()
	brief := filepath.Join(dir, "notes", "brief.md")
	first := newDriver(t, s, dir)
	first.pass(t)
	if err := remote(s).Send(context.Background(), "use tabs"); err != nil {
		t.Fatal(err)
	}
	first.pass(t)
	first.pass(t)
	if got := runTool(t, first.c.Tools()[1], "call-1", `{}`); !strings.Contains(got, "use tabs") || strings.Count(got, "use tabs") != 1 {
		t.Fatalf("inbox = %q, want the mail once", got)
	}
	second := newDriver(t, s, dir) // a crash after the read
	second.pass(t)
	if got := runTool(t, second.c.Tools()[1], "call-2", `{}`); got != InboxEmptyText {
		t.Errorf("inbox after the crash = %q, want empty: read once", got)
	}
	// Mail sent while no driver lives reaches the next one, once.
	if err := remote(s).Send(context.Background(), "and no trailing spaces"); err != nil {
		t.Fatal(err)
	}
	third := newDriver(t, s, dir)
	third.pass(t)
	fourth := newDriver(t, s, dir)
	fourth.pass(t)
	if got := runTool(t, fourth.c.Tools()[1], "call-3", `{}`); strings.Count(got, "and no trailing spaces") != 1 {
		t.Errorf("inbox = %q, want the mail sent meanwhile once", got)
	}
	b := readFile(t, brief)
	if strings.Count(b, "> use tabs") != 1 || strings.Count(b, "> and no trailing spaces") != 1 {
		t.Errorf("brief, want each mail appended once:\n%s", b)
	}
}

func TestRemoteInterruptOnceAcrossACrash(t *testing.T) {
	s := mem.New()
	dir := t.TempDir()
	first := newDriver(t, s, dir)
	first.pass(t)
	if err := remote(s).Interrupt(context.Background(), "stop: use tabs"); err != nil {
		t.Fatal(err)
	}
	first.pass(t)
	first.pass(t)
	if got := first.interrupted(); len(got) != 1 || got[0] != "stop: use tabs" {
		t.Fatalf("interrupts = %q, want one", got)
	}
	second := newDriver(t, s, dir)
	second.pass(t)
	if got := second.interrupted(); len(got) != 0 {
		t.Errorf("after a crash the interrupt was applied again: %q", got)
	}
	if got := runTool(t, second.c.Tools()[1], "call-1", `{}`); got != InboxEmptyText {
		t.Errorf("inbox = %q, want empty", got)
	}
	// One sent while no driver lives found the run stopped: its words
	// reach the next driver as mail, once.
	if err := remote(s).Interrupt(context.Background(), "then add a test"); err != nil {
		t.Fatal(err)
	}
	third := newDriver(t, s, dir)
	third.pass(t)
	if got := third.interrupted(); len(got) != 0 {
		t.Errorf("a stale interrupt was applied: %q", got)
	}
	fourth := newDriver(t, s, dir)
	fourth.pass(t)
	if got := runTool(t, fourth.c.Tools()[1], "call-2", `{}`); strings.Count(got, "then add a test") != 1 {
		t.Errorf("inbox = %q, want the stale interrupt's words once", got)
	}
}

func TestWithdrawnAskIsNotPending(t *testing.T) {
	s := mem.New()
	d := newDriver(t, s, t.TempDir())
	done := d.ask(t, "call-1")
	if _, err := d.c.NextAsk(watchdog(t)); err != nil {
		t.Fatal(err)
	}
	d.cancelAsked() // an interrupt cuts the call
	if o := wait(t, done); o.err == nil {
		t.Fatalf("a cut ask returned %+v, want ctx's error", o)
	}
	if pending, _ := remote(s).Pending(context.Background()); len(pending) != 0 {
		t.Errorf("Pending after the ask was cut = %+v, want none", pending)
	}
	if ok, err := remote(s).Answer(context.Background(), "q1", "tabs"); ok || err != nil {
		t.Errorf("an answer to the cut ask = %v, %v; want false", ok, err)
	}
}
