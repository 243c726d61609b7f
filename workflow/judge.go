package workflow

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/resume"
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

// NoRework as Judge.Rounds judges once and sends no findings back: the
// zero value keeps its default of 3 (issue 11: --rounds 0 means none).
const NoRework = -1

// judge runs verdict rounds: a fresh judge each round (R3.8), findings of a
// failed verdict back to the work session as work#round<N> (R3.15).
func (r *runner) judge(ctx context.Context, out Outcome) (Outcome, *agent.Result, error) {
	j := r.w.Judge
	rounds := j.Rounds
	switch {
	case rounds == NoRework:
		rounds = 0
	case rounds <= 0:
		rounds = 3
	}
	if res, err := r.finishRework(ctx); res != nil || err != nil {
		return out, res, err
	}
	for n := 0; n <= rounds; n++ { // rounds reset on every wake (R3.14)
		v, res, err := r.roundVerdict(ctx)
		if res != nil || err != nil {
			return out, res, err
		}
		out.Passed, out.Verdict = v.Pass, v.Findings
		if v.Pass || n == rounds {
			return out, nil, nil
		}
		if res, err := r.rework(ctx, r.run.Round, v.Findings); res != nil || err != nil {
			return out, res, err
		}
	}
	return out, nil, nil
}

// roundVerdict is the verdict a crash left stored and not yet acted on,
// else a new (or the cut) judge round's.
func (r *runner) roundVerdict(ctx context.Context) (Verdict, *agent.Result, error) {
	if pass, findings, ok := resume.Verdict(r.run); ok {
		return Verdict{Pass: pass, Findings: findings}, nil, nil
	}
	return r.verdict(ctx)
}

// finishRework completes a rework round a crash cut, before judging again.
func (r *runner) finishRework(ctx context.Context) (*agent.Result, error) {
	if !r.cut(r.w.Judge.Work) {
		return nil, nil
	}
	return r.reworkRound(ctx, r.run.Row, r.cutPlan(""))
}

func (r *runner) workStep() (int, Step) {
	for i, s := range r.w.Steps {
		if s.Name == r.w.Judge.Work {
			return i, s
		}
	}
	return len(r.w.Steps) - 1, Step{Name: r.w.Judge.Work}
}

// judgeStep names the judge in the run's step in flight.
const judgeStep = resume.JudgeStep

// verdict runs one judge round, or finishes the one a crash cut. The
// round's number and row are durable before its request; its session is
// named with its prompt.
func (r *runner) verdict(ctx context.Context) (Verdict, *agent.Result, error) {
	j := r.w.Judge
	resume, prompt := "", (Step{Prompt: j.Prompt, Context: j.Context}).prompt()
	if r.cut(judgeStep) && r.run.Judge != "" {
		resume, prompt = r.run.Judge, "" // a cut round resumes its own session
	} else if !r.cut(judgeStep) {
		r.run.Round++
		r.run.Judge = ""
	}
	row := fmt.Sprintf("%s·judge#%d", j.Work, r.run.Round)
	if err := r.begin(ctx, judgeStep, row, plan{session: resume}); err != nil {
		return Verdict{}, nil, err
	}
	r.emit(r.stepEvent(len(r.w.Steps), row, fmt.Sprintf("judge round %d", r.run.Round), "fresh eyes", false,
		map[string]any{"judge": true}))
	res := r.rt.Run(ctx, j.Spec, prompt, agent.RunOptions{Resume: resume, Sink: r.stepSink(row), With: r.bindJudge()})
	if err := r.reload(ctx); err != nil {
		return Verdict{}, nil, err
	}
	if !res.OK {
		return Verdict{}, &res, r.record(ctx, row, res, false)
	}
	entries, err := r.st.Load(ctx, store.SessionKey(r.ws, res.SessionID))
	v, ok := lastVerdict(entries)
	if err != nil || !ok {
		v = Verdict{Findings: "The judge ended without calling the verdict tool; treat the work as unverified."}
	}
	r.run.Verdict, r.run.Findings = "fail", v.Findings
	if v.Pass {
		r.run.Verdict = "pass"
	}
	return v, nil, r.record(ctx, row, res, true)
}

// bindJudge names the judge round's session in the run, with its prompt.
// A judge's session never enters the lineage (R3.8).
func (r *runner) bindJudge() func(session string) store.Batch {
	return func(session string) store.Batch {
		run := r.run
		run.Judge, run.Session, run.Prompt, run.Updated = session, session, "", r.opts.Now()
		return store.Batch{Run: &run}
	}
}

// rework sends a failed verdict's findings to the work session.
func (r *runner) rework(ctx context.Context, round int, findings string) (*agent.Result, error) {
	j := r.w.Judge
	prompt := "The judge checked your work against the goals and it does not pass yet. Fix these findings, verify, then end your turn:\n\n" + findings
	if j.Findings != nil {
		prompt = j.Findings(round, findings)
	}
	row := fmt.Sprintf("%s#round%d", j.Work, round)
	r.run.Verdict, r.run.Findings = "", "" // acted on: the round's start commits this
	return r.reworkRound(ctx, row, plan{session: r.sessionOf(j.Work), prompt: prompt, connected: true})
}

// reworkRound runs a work#round<N> attempt in the work session; once it is
// done no step is in flight.
func (r *runner) reworkRound(ctx context.Context, row string, p plan) (*agent.Result, error) {
	i, st := r.workStep()
	res, err := r.attempt(ctx, i, st, row, p)
	if err != nil || !res.OK {
		return &res, err
	}
	return nil, nil
}
