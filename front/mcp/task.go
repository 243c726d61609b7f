package mcpserver

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
	"github.com/flower-run/flower/workflow"
)

// The states of a task, as task_status says them.
const (
	StateRunning = "running" // working, nothing waits for the client
	StateWaiting = "waiting" // a question waits for task_answer
	StatePassed  = "passed"  // the judge passed the work
	StateFailed  = "failed"  // the judge did not pass it, or an error stopped it
	StateStopped = "stopped" // interrupted, or the client's session ended: it continues where it stopped
)

// task is one wake driven in process: its events, its state, and once
// started, the channel and runtime the tools steer it through.
type task struct {
	dir    string
	events *event.Broker // every event, numbered, the latest kept
	notes  *lines        // flower's notices (the sandbox, restored notes)
	done   chan struct{} // closed when the task is over and its Host closed
	// ctx is the task's, apart from any tool call's: cut cancels it, and
	// the step in flight is recorded as cut.
	ctx context.Context
	cut context.CancelCauseFunc
	// steering, in a task's own process, keeps the events in the store
	// and follows the journal while the task runs.
	steering *web.Steering

	// hostMu guards s, the store the goroutine writes through: status
	// reads the run in flight from it until the goroutine closes it.
	hostMu sync.RWMutex
	s      store.Store

	// mu guards the fields below.
	mu       sync.Mutex
	ch       *human.Channel // nil until started
	rt       *agent.Runtime // nil until started
	stopping bool           // task_interrupt without text, or Shutdown: stop at the next boundary
	state    string         // "" while it runs; then passed, failed or stopped
	run      string         // the run it finishes or ran
	step     string         // the row of the step in flight
	turns    int            // model responses
	cost     float64        // once ended
	message  string         // how it ended
	changed  chan struct{}  // closed and replaced when an event arrives or the state changes
}

func newTask(dir string, keep int) *task {
	t := &task{dir: dir, events: event.NewBroker(keep), notes: &lines{max: 20},
		done: make(chan struct{}), changed: make(chan struct{})}
	t.ctx, t.cut = context.WithCancelCause(context.Background())
	return t
}

// startOptions are the Host's: events to the task's buffer, the verdict
// tool, and a person who answers through task_answer.
func (t *task) startOptions(o Options) flower.StartOptions {
	return flower.StartOptions{Sink: t.publish, Tools: []tool.Tool{workflow.VerdictTool{}},
		Human: &flower.HumanOptions{Timeout: o.AskTimeout}}
}

// publish is the task's sink: it numbers and keeps the event, and notes
// the step and the turns.
func (t *task) publish(e event.Event) {
	t.events.Publish(e)
	if t.steering != nil {
		t.steering.Publish(e)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e.Kind {
	case event.Usage:
		t.turns++
	case event.Step:
		if row, ok := e.Payload["step"].(string); ok {
			t.step = row
		}
	}
	t.notify()
}

// notify wakes the task_events calls waiting; t.mu is held.
func (t *task) notify() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// started hands the tools the channel and the runtime; false: the task
// was stopped while it started.
func (t *task) started(h *flower.Host) bool {
	t.hostMu.Lock()
	t.s = h.Store()
	t.hostMu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ch, t.rt = h.Channel(), h.Runtime()
	return !t.stopping
}

// closing forgets the store before the goroutine closes it.
func (t *task) closing() {
	t.hostMu.Lock()
	t.s = nil
	t.hostMu.Unlock()
}

func (t *task) setRun(id string) {
	t.mu.Lock()
	t.run = id
	t.mu.Unlock()
}

// end records how the task ended.
func (t *task) end(state, run, message string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.state, t.message = state, message
	if run != "" {
		t.run = run
	}
	t.notify()
}

// finish records how Drive ended.
func (t *task) finish(ctx context.Context, o workflow.Outcome, cost float64) {
	t.mu.Lock()
	t.cost = cost
	t.mu.Unlock()
	switch {
	case o.Passed:
		t.end(StatePassed, o.Run, fmt.Sprintf("passed: the verdict passed · run %s · %s", o.Run, model.USD(cost)))
	case o.Interrupted || ctx.Err() != nil:
		t.end(StateStopped, o.Run, t.stopped())
	case o.Err != nil:
		t.end(StateFailed, o.Run, fmt.Sprintf("failed: %v (task_start again to retry)", o.Err))
	default:
		t.end(StateFailed, o.Run, fmt.Sprintf("failed: the judge did not pass the work after the last round · run %s · %s\n%s\n"+
			"task_start again to keep working, or with a task saying what to change", o.Run, model.USD(cost), strings.TrimSpace(o.Verdict)))
	}
}

func (t *task) stopped() string {
	return fmt.Sprintf("stopped: run flower in %s, or task_start again, to continue where it stopped", t.dir)
}

// running reports whether the task has not ended yet.
func (t *task) running() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.state == ""
}

// stop interrupts the task at its next message boundary: with text, it
// continues with text as the person's message; without, it stops.
func (t *task) stop(text string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.state != "" {
		return fmt.Errorf("the task in %s is not running (%s)", t.dir, t.state)
	}
	if t.rt == nil && text != "" {
		return fmt.Errorf("the task in %s is still starting: interrupt it in a moment", t.dir)
	}
	if text == "" {
		t.stopping = true
	}
	if t.rt != nil {
		t.rt.Interrupt(text)
	}
	return nil
}

// channel is the task's human channel, once it runs.
func (t *task) channel() (*human.Channel, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.state != "":
		return nil, fmt.Errorf("the task in %s is not running (%s)", t.dir, t.state)
	case t.ch == nil:
		return nil, fmt.Errorf("the task in %s is still starting: try again in a moment", t.dir)
	}
	return t.ch, nil
}

// Status is task_status's structured answer.
type Status struct {
	Directory string     `json:"directory"`
	State     string     `json:"state" jsonschema:"running, waiting (a question waits for task_answer), passed, failed or stopped (task_start continues it)"`
	Run       string     `json:"run,omitempty" jsonschema:"the run's id (flower ps lists runs)"`
	Step      string     `json:"step,omitempty" jsonschema:"the step in flight or last run, e.g. work or work·judge#1"`
	Questions []Question `json:"questions,omitempty" jsonschema:"the questions waiting for task_answer, oldest first"`
	CostUSD   float64    `json:"cost_usd" jsonschema:"what the model calls of this task cost so far"`
	Turns     int        `json:"turns" jsonschema:"model responses so far"`
	LastSeq   int        `json:"last_seq" jsonschema:"the seq of the newest event (task_events after it waits for the next)"`
	DriverPID int        `json:"driver_pid,omitempty" jsonschema:"the process that drives the task now, while it runs"`
	Message   string     `json:"message,omitempty" jsonschema:"how it ended, and what to do next"`
	Notes     []string   `json:"notes,omitempty" jsonschema:"flower's notices about this task (sandbox, restored notes)"`
}

// Question is a question waiting for task_answer.
type Question struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Options  []string `json:"options,omitempty" jsonschema:"the answers offered; an answer may be the option's number, from 1"`
	WaitedS  float64  `json:"waited_s"`
}

func (t *task) status(ctx context.Context) Status {
	st := Status{Directory: t.dir, LastSeq: t.events.Last(), Notes: t.notes.all()}
	t.mu.Lock()
	st.State, st.Run, st.Step, st.Turns, st.Message = t.state, t.run, t.step, t.turns, t.message
	st.CostUSD = t.cost
	ch, rt := t.ch, t.rt
	t.mu.Unlock()
	if st.State != "" {
		return st
	}
	st.State, st.DriverPID = StateRunning, os.Getpid()
	if rt != nil {
		st.CostUSD = rt.TotalCost()
	}
	if ch != nil {
		now := time.Now()
		for _, a := range ch.Pending() {
			st.Questions = append(st.Questions, Question{ID: a.ID, Question: a.Question, Options: a.Options, WaitedS: a.WaitedS(now)})
		}
	}
	if len(st.Questions) > 0 {
		st.State = StateWaiting
	}
	if st.Run == "" {
		st.Run = t.inFlight(ctx)
	}
	return st
}

// inFlight is the id of the workspace's newest run in flight, read from
// the store while the task holds it.
func (t *task) inFlight(ctx context.Context) string {
	t.hostMu.RLock()
	defer t.hostMu.RUnlock()
	if t.s == nil {
		return ""
	}
	runs, err := t.s.Runs(ctx, t.dir)
	if err != nil {
		return ""
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Status == store.RunInFlight {
			return runs[i].ID
		}
	}
	return ""
}

// text is a status in a few lines, for a person or a model that reads
// the content rather than the structured output.
func (st Status) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s in %s", st.State, st.Directory)
	if st.Run != "" {
		fmt.Fprintf(&b, " · run %s", st.Run)
	}
	if st.Step != "" {
		fmt.Fprintf(&b, " · step %s", st.Step)
	}
	fmt.Fprintf(&b, " · %d turns · %s\n", st.Turns, model.USD(st.CostUSD))
	for _, q := range st.Questions {
		fmt.Fprintf(&b, "question %s: %s", q.ID, q.Question)
		for i, o := range q.Options {
			fmt.Fprintf(&b, " [%d] %s", i+1, o)
		}
		b.WriteString(" (answer with task_answer)\n")
	}
	if st.Message != "" {
		b.WriteString(st.Message + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// lines keeps the last lines written to it: a task's notices.
type lines struct {
	mu    sync.Mutex // guards lines
	max   int
	lines []string
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if s = strings.TrimSpace(s); s != "" {
			l.lines = append(l.lines, s)
		}
	}
	if n := len(l.lines) - l.max; n > 0 {
		l.lines = append(l.lines[:0], l.lines[n:]...)
	}
	return len(p), nil
}

func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) == 0 {
		return nil
	}
	return append([]string(nil), l.lines...)
}
