package workflow

import (
	"context"
	"fmt"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
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

// step runs step i unless it is done or frozen, with retries; it reports
// the failing result when the run cannot go on.
func (r *runner) step(ctx context.Context, i int, st Step) (*agent.Result, bool) {
	if r.state.Done[st.Name] {
		return nil, true
	}
	if st.Frozen != nil && !r.cut(st.Name) && st.Frozen() {
		r.emit(event.Event{Kind: event.Step, Text: r.header(i, st.Name, "frozen, skipped"),
			Payload: map[string]any{"step": st.Name, "n": i + 1, "total": r.total(), "skipped": true}})
		r.markDone(st.Name)
		return nil, true
	}
	p := r.planStep(st)
	res := r.attempt(ctx, i, st, st.Name, p)
	for n := 1; !res.OK && transient(res) && n <= maxStepRetries; n++ {
		res = r.attempt(ctx, i, st, fmt.Sprintf("%s#retry%d", st.Name, n),
			plan{session: res.SessionID, prompt: ResumePrompt, connected: true})
	}
	if !res.OK {
		return &res, false
	}
	r.markDone(st.Name)
	return nil, true
}

func (r *runner) markDone(name string) {
	r.state.Done[name], r.state.Step, r.state.Session, r.state.Prompt = true, "", "", ""
	r.saveState()
}

// planStep picks the session and prompt of a step (R3.5, R3.10, R3.11).
func (r *runner) planStep(st Step) plan {
	if r.cut(st.Name) {
		// A crash cut this step: go on exactly where it stopped.
		return plan{session: r.state.Session, prompt: st.CrashPrompt, connected: true}
	}
	if r.resumed && r.state.Step == st.Name && r.state.Prompt != "" {
		// A crash cut this step before its new session was known: start it
		// again with the prompt it had (a bare wake may not know the task).
		return plan{prompt: r.state.Prompt}
	}
	if st.ResumeFrom != "" {
		if id := r.sessionOf(st.ResumeFrom); id != "" {
			return plan{session: id, fork: st.Fork, prompt: st.Prompt, connected: true}
		}
	}
	if id := r.lineage.Steps[st.Name]; r.w.Continuous && id != "" {
		prompt := st.ResumePrompt
		if prompt == "" {
			prompt = st.Prompt
		}
		return plan{session: id, prompt: prompt, connected: true}
	}
	return plan{prompt: st.Prompt}
}

// cut reports whether a crash cut this step once its session was known.
// It is finished where it stopped, even when its output already makes it
// look frozen: the step had not ended (R3.1, R5.3).
func (r *runner) cut(step string) bool {
	return r.resumed && r.state.Step == step && r.state.Session != ""
}

// sessionOf is a step's session in this run, else in the lineage.
func (r *runner) sessionOf(step string) string {
	if id := r.sessions[step]; id != "" {
		return id
	}
	if r.w.Continuous {
		return r.lineage.Steps[step]
	}
	return ""
}

// attempt runs one attempt of a step and records it.
func (r *runner) attempt(ctx context.Context, i int, st Step, row string, p plan) agent.Result {
	how := "new session"
	if p.connected {
		how = "connected"
	}
	if r.state.Step != st.Name {
		r.state.Step, r.state.Session, r.state.Prompt = st.Name, "", ""
		if p.session == "" {
			// Until the first response names the new session, its prompt
			// exists nowhere else: make it durable before the request.
			r.state.Prompt = p.prompt
		}
		r.saveState()
	}
	r.emit(event.Event{Kind: event.Step, Text: r.header(i, row, how),
		Payload: map[string]any{"step": row, "n": i + 1, "total": r.total(), "connected": p.connected}})
	res := r.rt.Run(ctx, st.Spec, p.prompt, agent.RunOptions{Resume: p.session, Fork: p.fork,
		Sink: r.stepSink(st.Name, false)})
	r.record(row, res)
	return res
}

// header is a step's title line: n/total and whether it connected (R3.12).
func (r *runner) header(i int, name, how string) string {
	return fmt.Sprintf("── %d/%d %s (%s)", i+1, r.total(), name, how)
}

// total counts the judge as a step.
func (r *runner) total() int {
	if r.w.Judge != nil {
		return len(r.w.Steps) + 1
	}
	return len(r.w.Steps)
}

// stepSink forwards a step's events, tagged with the step. The moment the
// step's session is known it goes into the run state and, for a plain step,
// the lineage (R3.2); a judge's session never enters the lineage (R3.8).
func (r *runner) stepSink(step string, judge bool) event.Sink {
	return func(e event.Event) {
		if id, ok := e.Payload["session"].(string); ok && e.Kind == event.Init && e.Payload["subagent"] == nil {
			r.known(step, id, judge)
		}
		p := map[string]any{"step": step}
		for k, v := range e.Payload {
			p[k] = v
		}
		e.Payload = p
		r.emit(e)
	}
}

// record appends the attempt to the manifest and tells OnStep (R3.4, R6.10).
// A step cut by exiting at once (a second Ctrl-C) gets no row: the person
// asked flower to stop doing anything; its lineage is already saved (R3.7).
func (r *runner) record(row string, res agent.Result) {
	if res.Error != context.Canceled.Error() {
		if err := r.manifest.Record(row, res); err != nil {
			r.warn("manifest not saved: " + err.Error())
		}
	}
	if r.w.OnStep != nil {
		func() {
			defer func() { _ = recover() }()
			r.w.OnStep(row, res)
		}()
	}
}

func (r *runner) known(step, id string, judge bool) {
	if judge {
		r.state.Judge = id
		r.saveState()
		return
	}
	r.sessions[step] = id
	if r.state.Session != id {
		r.state.Session = id
		r.saveState()
	}
	if err := r.lineage.Set(step, id); err != nil {
		r.warn("lineage not saved: " + err.Error())
	}
}
