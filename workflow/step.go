package workflow

import (
	"context"
	"errors"
	"fmt"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
)

// ResumePrompt is what a retried step receives: its session already holds
// what was done, and no error details are given (R4.4).
const ResumePrompt = "You were interrupted. Check what is already on the workbench and in the workspace, then continue from there. Do not start over."

// plan is how one step attempt starts.
type plan struct {
	session   string // continue this session ("" = new)
	fork      bool
	prompt    string
	connected bool
}

// step runs step i unless it is done or frozen, with retries. It returns
// the failing result when the run cannot go on, or an error when the store
// could not record it.
func (r *runner) step(ctx context.Context, i int, st Step) (*agent.Result, error) {
	if r.run.IsDone(st.Name) {
		return nil, nil
	}
	cut := r.cut(st.Name)
	if st.Frozen != nil && !cut && st.Frozen() {
		r.emit(r.stepEvent(i, st.Name, st.Name, "frozen, skipped", false, map[string]any{"skipped": true}))
		return nil, r.markDone(ctx, st.Name)
	}
	row, p := st.Name, r.planStep(st)
	if cut {
		row, p = r.run.Row, r.cutPlan(st.CrashPrompt)
	}
	res, err := r.attempt(ctx, i, st, row, p)
	for n := 1; err == nil && !res.OK && transient(res) && n <= maxStepRetries; n++ {
		res, err = r.attempt(ctx, i, st, fmt.Sprintf("%s#retry%d", st.Name, n),
			plan{session: res.SessionID, prompt: ResumePrompt, connected: true})
	}
	if err != nil || !res.OK {
		return &res, err
	}
	return nil, nil
}

// maxStepRetries bounds #retry attempts of a failed step.
const maxStepRetries = 2

// cut reports whether a crash (or a stop) cut this step: the run names it
// as the step in flight. It is finished where it stopped, even when its
// output already makes it look frozen: the step had not ended (R3.1, R5.3).
func (r *runner) cut(step string) bool {
	return r.resumed && r.run.Step == step
}

// cutPlan continues the attempt in flight (resume.StepInFlight): in its
// session once the prompt reached it, else from the start the run
// recorded for it.
func (r *runner) cutPlan(crashPrompt string) plan {
	st, _ := resume.StepInFlight(r.run)
	if st.Session != "" {
		return plan{session: st.Session, prompt: crashPrompt, connected: true}
	}
	return plan{session: st.From, fork: st.Fork, prompt: st.Prompt, connected: st.From != ""}
}

// planStep picks the session and prompt of a step (R3.5, R3.10, R3.11).
func (r *runner) planStep(st Step) plan {
	if st.ResumeFrom != "" {
		if id := r.sessionOf(st.ResumeFrom); id != "" {
			return plan{session: id, fork: st.Fork, prompt: st.Prompt, connected: true}
		}
	}
	if id := r.sessionOf(st.Name); id != "" {
		prompt := st.ResumePrompt
		if prompt == "" {
			prompt = st.Prompt
		}
		return plan{session: id, prompt: prompt, connected: true}
	}
	return plan{prompt: st.prompt()}
}

// sessionOf is a step's session in this run, else in the thread if it
// may be continued.
func (r *runner) sessionOf(step string) string {
	if id := r.ran[step]; id != "" {
		return id
	}
	if r.w.Fresh || r.dead[step] {
		return ""
	}
	return r.lineage.Steps[step]
}

// attempt runs one attempt of a step and records it. Its start is durable
// before the request: the row, and where and with what prompt it starts.
func (r *runner) attempt(ctx context.Context, i int, st Step, row string, p plan) (agent.Result, error) {
	if err := r.begin(ctx, st.Name, row, p); err != nil {
		return agent.Result{}, err
	}
	how := "new session"
	if p.connected {
		how = "connected"
	}
	r.emit(r.stepEvent(i, row, row, how, p.connected, nil))
	res := r.rt.Run(ctx, st.Spec, p.prompt, agent.RunOptions{Resume: p.session, Fork: p.fork,
		Sink: r.stepSink(st.Name), With: r.bind(st.Name)})
	if err := r.reload(ctx); err != nil {
		return res, err
	}
	if res.SessionID != "" {
		r.ran[st.Name] = res.SessionID
	}
	if r.dead[st.Name] && r.lineage.Steps[st.Name] != "" && r.rt.HasSession(r.lineage.Steps[st.Name]) {
		delete(r.dead, st.Name)
	}
	return res, r.record(ctx, row, res, res.OK)
}

// begin makes the start of an attempt durable. The session is named at
// once only when no prompt will carry it there: else the binding waits
// for the prompt, so a crash in between starts the attempt again with it.
func (r *runner) begin(ctx context.Context, step, row string, p plan) error {
	r.run.Step, r.run.Row, r.run.From, r.run.Fork, r.run.Prompt, r.run.Session = step, row, p.session, p.fork, p.prompt, ""
	if p.prompt == "" && !p.fork {
		r.run.Session = p.session
	}
	return r.commit(ctx, store.Batch{Run: &r.run})
}

// bind is what the agent commits with the prompt of a step's session (or a
// handoff successor's first message): the run names the session and the
// lineage binds the step to it, in the same transaction (R3.2).
func (r *runner) bind(step string) func(session string) store.Batch {
	return func(session string) store.Batch {
		run := r.run
		run.Session, run.Prompt, run.Updated = session, "", r.opts.Now()
		return store.Batch{Run: &run, Bind: []store.Binding{{Workspace: r.ws, Step: step, Session: session}}}
	}
}

// record writes an attempt's manifest row and, when the attempt finished
// its step, marks the step completed, in one commit (R3.4); then tells
// OnStep (R6.10). A step cut by exiting at once (a second Ctrl-C) gets no
// row: the person asked flower to stop doing anything (R3.7).
func (r *runner) record(ctx context.Context, row string, res agent.Result, finished bool) error {
	b := store.Batch{Run: &r.run}
	if finished {
		if r.run.Step != judgeStep && !r.run.IsDone(r.run.Step) {
			r.run.Done = append(r.run.Done, r.run.Step)
		}
		r.clearStep()
	}
	if !(res.Stop == agent.StopCancelled && errors.Is(res.Err, context.Canceled)) {
		b.Results = []store.StepResult{stepResult(r.run.ID, row, res)}
	}
	if err := r.commit(ctx, b); err != nil {
		return err
	}
	if len(b.Results) > 0 {
		r.exportManifest(ctx)
	}
	r.exportHeldLineage() // read after the attempt: the agent's bindings are in
	if r.w.OnStep != nil {
		func() {
			defer func() { _ = recover() }()
			r.w.OnStep(row, res)
		}()
	}
	return nil
}

// clearStep leaves no step in flight.
func (r *runner) clearStep() {
	r.run.Step, r.run.Row, r.run.From, r.run.Fork, r.run.Prompt, r.run.Session, r.run.Judge = "", "", "", false, "", "", ""
}

// markDone completes a step that ran nothing (frozen).
func (r *runner) markDone(ctx context.Context, step string) error {
	r.run.Done = append(r.run.Done, step)
	r.clearStep()
	return r.commit(ctx, store.Batch{Run: &r.run})
}

// stepResult is the manifest row of an attempt.
func stepResult(run, row string, res agent.Result) store.StepResult {
	return store.StepResult{Run: run, Step: row, SessionID: res.SessionID, OK: res.OK, CostUSD: res.Cost,
		NumTurns: res.Turns, Text: res.Text, Error: res.Error, StartedAt: res.Start, EndedAt: res.End,
		Attempts: res.Attempts, Errors: res.Errors, Resumed: res.Resumed, Retired: res.Retired,
		Context: res.Context, DurationS: res.End.Sub(res.Start).Seconds()}
}

// stepEvent is the event of a step boundary, as seed 004 has it: the text
// is the step's name (its row), the payload {index, total, resumed, woke}
// plus the row, and header, the title line a terminal shows: n/total and
// how the step starts (R3.12). title is the name in that line.
func (r *runner) stepEvent(i int, row, title, how string, connected bool, extra map[string]any) event.Event {
	p := map[string]any{"step": row, "index": i + 1, "n": i + 1, "total": r.total(),
		"resumed": connected, "connected": connected, "woke": r.lineage.Woke,
		"header": fmt.Sprintf("── %d/%d %s (%s)", i+1, r.total(), title, how)}
	for k, v := range extra {
		p[k] = v
	}
	return event.Event{Kind: event.Step, Text: row, Payload: p}
}

// total counts the judge as a step.
func (r *runner) total() int {
	if r.w.Judge != nil {
		return len(r.w.Steps) + 1
	}
	return len(r.w.Steps)
}

// stepSink forwards a step's events, tagged with the step. Nothing durable
// flows through it: bindings are committed by the agent (RunOptions.With),
// and the sink only refreshes the lineage export once one is: at a resumed
// session's init, or a new session's first usage event, which follows the
// commit of its first response (its init comes before its first model
// call, when the prompt and its binding may still be on their way).
func (r *runner) stepSink(step string) event.Sink {
	exported := false
	return func(e event.Event) {
		if e.Payload["subagent"] == nil {
			switch {
			case e.Kind == event.Init && e.Payload["resumed"] == true:
				exported = false
				fallthrough
			case e.Kind == event.Usage && !exported:
				exported = true
				r.exportLineage(context.Background())
			case e.Kind == event.Init:
				exported = false // a new session (a handoff's too): export at its first usage
			}
		}
		p := map[string]any{"step": step}
		for k, v := range e.Payload {
			p[k] = v
		}
		e.Payload = p
		r.emit(e)
	}
}
