package workflow

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
)

// VerdictName is the tool a judge answers with.
const VerdictName = "verdict"

// Verdict is the judge's answer.
type Verdict struct {
	Pass     bool   `json:"pass"`
	Findings string `json:"findings"`
}

// VerdictTool is the judge's way to give its verdict. The verdict is read
// back from the judge's stored session, so it survives a crash like any
// other entry.
type VerdictTool struct{}

var _ tool.Tool = VerdictTool{}

func (VerdictTool) Name() string      { return VerdictName }
func (VerdictTool) Class() tool.Class { return tool.Pure }
func (VerdictTool) Description() string {
	return "Give your verdict on the work: pass is true only when every goal check is met and you verified it yourself " +
		"(read the files, ran the tests). findings lists, one per line, each check that fails and why, with the evidence " +
		"(file, command, output) — concrete enough that the worker can fix it without asking. Call it exactly once, at the end."
}
func (VerdictTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"pass":{"type":"boolean","description":"true only if every check passes"},` +
		`"findings":{"type":"string","description":"what fails and why, with evidence; on pass, a short summary of what you verified"}},` +
		`"required":["pass","findings"]}`)
}
func (VerdictTool) Run(_ context.Context, input json.RawMessage) (tool.Result, error) {
	var v Verdict
	if err := json.Unmarshal(input, &v); err != nil {
		return tool.Errorf("verdict needs {\"pass\": bool, \"findings\": string}: %v", err), nil
	}
	return tool.Result{Content: "Verdict recorded. End your turn now."}, nil
}

// lastVerdict reads the last verdict call of a judge session.
func lastVerdict(entries []store.Entry) (Verdict, bool) {
	var v Verdict
	found := false
	for _, e := range entries {
		if e.Kind != store.KindAssistant || e.Message == nil {
			continue
		}
		for _, u := range e.Message.ToolUses() {
			var got Verdict
			if u.Name == VerdictName && json.Unmarshal(u.Input, &got) == nil {
				v, found = got, true
			}
		}
	}
	return v, found
}

// judge runs verdict rounds: a fresh judge each round (R3.8), findings of a
// failed verdict back to the work session as work#round<N> (R3.15).
func (r *runner) judge(ctx context.Context, out Outcome) (Outcome, *agent.Result) {
	j := r.w.Judge
	rounds := j.Rounds
	if rounds <= 0 {
		rounds = 3
	}
	if res := r.finishRework(ctx); res != nil {
		return out, res
	}
	for n := 0; n <= rounds; n++ { // rounds reset on every wake (R3.14)
		if r.state.Judge == "" { // else a crash cut this round: finish it
			r.state.Round++
		}
		v, res := r.verdict(ctx, r.state.Round)
		if res != nil {
			return out, res
		}
		out.Passed, out.Verdict = v.Pass, v.Findings
		if v.Pass || n == rounds {
			return out, nil
		}
		if res := r.rework(ctx, r.state.Round, v.Findings); res != nil {
			return out, res
		}
	}
	return out, nil
}

// finishRework completes a rework round a crash cut, before judging again.
func (r *runner) finishRework(ctx context.Context) *agent.Result {
	j := r.w.Judge
	if !r.resumed || r.state.Step != j.Work || r.state.Session == "" {
		return nil
	}
	return r.reworkRound(ctx, r.state.Round, plan{session: r.state.Session, connected: true})
}

func (r *runner) workStep() Step {
	for _, s := range r.w.Steps {
		if s.Name == r.w.Judge.Work {
			return s
		}
	}
	return Step{Name: r.w.Judge.Work}
}

// verdict runs one judge round, or finishes the one a crash cut.
func (r *runner) verdict(ctx context.Context, round int) (Verdict, *agent.Result) {
	j := r.w.Judge
	row := fmt.Sprintf("%s·judge#%d", j.Work, round)
	resume, prompt := "", j.Prompt
	if r.state.Judge != "" {
		resume, prompt = r.state.Judge, "" // a cut round resumes its own session
	}
	r.emit(event.Event{Kind: event.Step, Text: r.header(len(r.w.Steps), fmt.Sprintf("judge round %d", round), "fresh eyes"),
		Payload: map[string]any{"step": row, "judge": true}})
	res := r.rt.Run(ctx, j.Spec, prompt, agent.RunOptions{Resume: resume, Sink: r.stepSink(row, true)})
	r.record(row, res)
	if !res.OK {
		return Verdict{}, &res
	}
	entries, err := r.rt.Store().Load(ctx, store.SessionKey(r.rt.Workspace(), res.SessionID))
	v, ok := lastVerdict(entries)
	if err != nil || !ok {
		v = Verdict{Findings: "The judge ended without calling the verdict tool; treat the work as unverified."}
	}
	r.state.Judge = ""
	r.saveState()
	return v, nil
}

// rework sends a failed verdict's findings to the work session.
func (r *runner) rework(ctx context.Context, round int, findings string) *agent.Result {
	j := r.w.Judge
	prompt := "The judge checked your work against the goals and it does not pass yet. Fix these findings, verify, then end your turn:\n\n" + findings
	if j.Findings != nil {
		prompt = j.Findings(round, findings)
	}
	return r.reworkRound(ctx, round, plan{session: r.sessionOf(j.Work), prompt: prompt, connected: true})
}

// reworkRound runs work#round<N> in the work session and, once it is done,
// clears the step in flight.
func (r *runner) reworkRound(ctx context.Context, round int, p plan) *agent.Result {
	row := fmt.Sprintf("%s#round%d", r.w.Judge.Work, round)
	res := r.attempt(ctx, len(r.w.Steps)-1, r.workStep(), row, p)
	if !res.OK {
		return &res
	}
	r.state.Step, r.state.Session = "", ""
	r.saveState()
	return nil
}
