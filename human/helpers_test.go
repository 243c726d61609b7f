package human

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/tool"
)

// start is the fake clock's first instant.
var start = time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)

// fakeClock never moves by itself. After hands each timer to the test on
// timers; fire advances the clock and fires the next one.
type fakeClock struct {
	mu     sync.Mutex // guards now
	now    time.Time
	timers chan fakeTimer
}

type fakeTimer struct {
	d time.Duration
	c chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: start, timers: make(chan fakeTimer, 256)}
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) After(d time.Duration) <-chan time.Time {
	t := fakeTimer{d: d, c: make(chan time.Time, 1)}
	f.timers <- t
	return t.c
}

func (f *fakeClock) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// fire waits for the next timer to be set, moves the clock to its deadline
// and fires it. It returns the timer's duration.
func (f *fakeClock) fire(t *testing.T) time.Duration {
	t.Helper()
	select {
	case tm := <-f.timers:
		f.advance(tm.d)
		tm.c <- f.Now()
		return tm.d
	case <-watchdog(t).Done():
		t.Fatal("no timer was set")
		return 0
	}
}

// skip discards the next timer, one left behind by an ask already settled.
func (f *fakeClock) skip(t *testing.T) {
	t.Helper()
	select {
	case <-f.timers:
	default:
		t.Fatal("no timer to skip")
	}
}

// noTimer fails if a timer has been set.
func (f *fakeClock) noTimer(t *testing.T) {
	t.Helper()
	select {
	case tm := <-f.timers:
		t.Fatalf("a timer of %v was set", tm.d)
	default:
	}
}

// recorder is an event sink that keeps everything.
type recorder struct {
	mu  sync.Mutex // guards evs
	evs []event.Event
}

func (r *recorder) sink(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, e)
}

func (r *recorder) events() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.evs...)
}

// states lists the payload states of the events about ask id, in order.
func (r *recorder) states(id string) []string {
	var out []string
	for _, e := range r.events() {
		if e.Kind == event.Ask && e.Payload["id"] == id {
			out = append(out, e.Payload["state"].(string))
		}
	}
	return out
}

// last returns the last event about ask id.
func (r *recorder) last(t *testing.T, id string) event.Event {
	t.Helper()
	evs := r.events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Kind == event.Ask && evs[i].Payload["id"] == id {
			return evs[i]
		}
	}
	t.Fatalf("no event for %s", id)
	return event.Event{}
}

func (r *recorder) kinds(k event.Kind) []event.Event {
	var out []event.Event
	for _, e := range r.events() {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// fixture is a channel on a fake clock, a recorder and a temp workbench.
type fixture struct {
	c    *Channel
	clk  *fakeClock
	rec  *recorder
	dir  string
	ask  tool.Tool
	inbx tool.Tool
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	f := &fixture{clk: newFakeClock(), rec: &recorder{}, dir: t.TempDir()}
	opts.Clock, opts.Sink = f.clk, f.rec.sink
	if opts.Timeout == 0 { // the fixture's asks wait, as the CLI's do by default
		opts.Timeout = DefaultTimeout
	}
	if opts.Workbench == "" {
		opts.Workbench = f.dir
	}
	f.c = New(opts)
	tools := f.c.Tools()
	f.ask, f.inbx = tools[0], tools[1]
	return f
}

// watchdog bounds a wait that should end at once, so a bug fails the test
// instead of hanging it. It is a deadline, not a sleep: no test waits on it
// when things work.
func watchdog(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type outcome struct {
	res tool.Result
	err error
}

// goAsk runs the ask tool in a goroutine.
func (f *fixture) goAsk(ctx context.Context, input string) <-chan outcome {
	done := make(chan outcome, 1)
	go func() {
		res, err := f.ask.Run(ctx, json.RawMessage(input))
		done <- outcome{res, err}
	}()
	return done
}

// askNow runs the ask tool where it must settle at once.
func (f *fixture) askNow(t *testing.T, input string) tool.Result {
	t.Helper()
	select {
	case o := <-f.goAsk(context.Background(), input):
		if o.err != nil {
			t.Fatalf("ask(%s): Go error %v", input, o.err)
		}
		return o.res
	case <-watchdog(t).Done():
		t.Fatalf("ask(%s) blocked", input)
		return tool.Result{}
	}
}

// next waits for the next ask to be pending.
func (f *fixture) next(t *testing.T) Ask {
	t.Helper()
	a, err := f.c.NextAsk(watchdog(t))
	if err != nil {
		t.Fatalf("NextAsk: %v", err)
	}
	return a
}

func wait(t *testing.T, done <-chan outcome) outcome {
	t.Helper()
	select {
	case o := <-done:
		return o
	case <-watchdog(t).Done():
		t.Fatal("ask did not settle")
		return outcome{}
	}
}

func inbox(t *testing.T, f *fixture) string {
	t.Helper()
	res, err := f.inbx.Run(context.Background(), json.RawMessage(`{}`))
	if err != nil || res.IsError {
		t.Fatalf("inbox: %v %+v", err, res)
	}
	return res.Content
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }
