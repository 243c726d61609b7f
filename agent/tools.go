package agent

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
)

// cutText is the result of a call cut by an interrupt or a cancelled run.
const cutText = "[interrupted: the person stopped this call before it finished]"

// runTools answers the calls of one response in order. An effect's result
// is durable before the next call runs, so a completed effect is never run
// again. The results of calls without an intent (pure and world calls) are
// held and ride along with the next commit of the session: the next
// effect's result or, when none follows, the commit of the next model
// response (or whatever the loop commits next: a note, an interrupt, an API
// error; the loop flushes them when it ends). A crash loses only results
// whose calls the resume runs again anyway, since a call without an intent
// or a result is pending and never ambiguous (resume.Call.Runs == 0); a
// response is durable only together with the results its request showed.
// So a turn of k such calls costs no commit of its own (package comment).
//
// Once the turn is cancelled the remaining calls are answered as cut,
// keeping the session consistent. A result that cannot be appended (a full
// disk) fails the run: the store then holds the intent and any attempts,
// so the next resume counts the runs right (R5.7).
func (s *session) runTools(ctx context.Context, calls []resume.Call) error {
	err := s.answer(ctx, calls)
	if err != nil {
		_ = s.flush(ctx) // keep what can be kept; the error says why the run stops
	}
	return err
}

// answer runs the calls and records their results.
func (s *session) answer(ctx context.Context, calls []resume.Call) error {
	for _, c := range calls {
		op, err := s.resolve(ctx, c)
		if err != nil {
			return err
		}
		failpoint.Hit("after-effect") // the call ran; its result is not durable yet
		if err := s.record(ctx, c.Use.Name, op); err != nil {
			return err
		}
		kind := event.ToolResult
		if op.Denied {
			kind = event.Denied
		}
		s.emit(event.Event{Kind: kind, Tool: c.Use.Name, Text: op.Content,
			Payload: map[string]any{"id": c.Use.ID, "is_error": op.IsError}})
	}
	return nil
}

// record makes an effect's result durable at once, with the results held
// before it, and holds the result of a call without an intent (the calls
// whose intent commit wrote with the response are exactly the effects),
// unless its tool keeps its results (tool.Keeper: a person's answer).
func (s *session) record(ctx context.Context, name string, op store.Op) error {
	e := store.Entry{Kind: store.KindResult, Op: &op}
	if t, ok := s.reg[name]; !s.isEffect(name) && !(ok && tool.Keeps(t)) {
		s.hold(e, ok && t.Class() == tool.World)
		return nil
	}
	if err := s.append(ctx, e); err != nil {
		return err
	}
	failpoint.Hit("after-result")
	return nil
}

// fresh are the calls of a response just made durable: none has run.
func fresh(uses []*model.ToolUse) []resume.Call {
	calls := make([]resume.Call, len(uses))
	for i, u := range uses {
		calls[i] = resume.Call{Use: u}
	}
	return calls
}

// skippedText completes an ambiguous call under the skip policy: what
// happened, that it may have run in part, and how to check (issue 22
// item 4). %s is the call: tool and what it acted on.
const skippedText = "[flower] A crash stopped flower while this call (%s) was running, before its result was recorded: it may have run completely, in part, or not at all. Under the resume policy \"skip\" it was not run again, so there is no output. %s"

// retriedText heads the result of an ambiguous call run again under the
// retry policy: the model learns that the first run may have done part of
// the work already, so the effect may now be there twice. Stored with the
// result, so every later request shows it the same way.
const retriedText = "[flower] A crash stopped flower while this call (%s) was running, before its result was recorded, so it was run again (run %d of at most %d). The first run may have taken effect completely or in part, so its effect may now be doubled. %s\n\nThe result of the run again:\n"

// checkHint says how to check what an interrupted call did.
func checkHint(tool string) string {
	switch tool {
	case "Bash":
		return "Check what the command changes (files, output it appends, processes it starts) before relying on it, and undo a duplicate."
	case "Write", "Edit":
		return "Read the file to see what it holds now."
	}
	return "Check its effect before relying on it."
}

// exhaustedText completes an ambiguous call that already ran as often as
// retry allows without a result: it may be what kills flower.
const exhaustedText = "[flower] This %s call (%s) was started %d times and never finished: each run was cut before its result was recorded, perhaps because the call itself stopped flower. Under the resume policy \"retry\" a call runs at most %d times, so it was not run again. It may or may not have taken effect: check before relying on it, and do not repeat it as it is."

// resolve answers one call, applying the resume policy of this step and
// tool when its outcome is unknown: an effect whose intent is durable but
// whose result is not (R5.4). A re-execution is recorded (op_attempt)
// before it runs, so retry stays within resume.MaxRuns across any number
// of crashes (R5.7); skip completes the call with a note; discard
// abandons the run.
func (s *session) resolve(ctx context.Context, c resume.Call) (store.Op, error) {
	u := c.Use
	if op, ok := s.blocked(u); ok {
		return op, nil
	}
	policy := s.rt.policies.For(s.step, u.Name)
	c.Idempotent = s.idempotent(u.Name)
	action := resume.Decide(c, policy)
	if action != resume.RunCall {
		s.emit(event.Event{Kind: event.Retry, Tool: u.Name,
			Text: fmt.Sprintf("a call cut by a crash (%s %s, %s) ran %d of %d times: policy %s, %s",
				u.Name, summary(u.Input), u.ID, c.Runs, resume.MaxRuns, policy, action),
			Payload: map[string]any{"id": u.ID, "policy": string(policy), "action": string(action),
				"runs": c.Runs, "ambiguous": true}})
	}
	switch action {
	case resume.SkipCall:
		return store.Op{ID: u.ID, Tool: u.Name, Content: fmt.Sprintf(skippedText, callOf(u), checkHint(u.Name))}, nil
	case resume.GiveUp:
		limit := resume.MaxRuns
		if c.Idempotent {
			limit = resume.MaxIdempotentRuns
		}
		return store.Op{ID: u.ID, Tool: u.Name, IsError: true,
			Content: fmt.Sprintf(exhaustedText, u.Name, u.ID, c.Runs, limit)}, nil
	case resume.DiscardRun:
		return store.Op{}, fmt.Errorf("%w: %s call %s was cut by a crash and the resume policy of step %q is discard",
			ErrDiscarded, u.Name, u.ID, s.step)
	case resume.RetryCall:
		attempt := store.Op{ID: u.ID, Tool: u.Name, Input: u.Input, Class: tool.Effect.String()}
		if err := s.append(ctx, store.Entry{Kind: store.KindAttempt, Op: &attempt}); err != nil {
			return store.Op{}, err
		}
		op, err := s.runTool(ctx, c)
		if err == nil && c.Runs > 0 && !c.Idempotent { // an idempotent call says twice is once
			op.Content = fmt.Sprintf(retriedText, callOf(u), c.Runs+1, resume.MaxRuns, checkHint(u.Name)) + op.Content
		}
		return op, err
	}
	return s.runTool(ctx, c)
}

// callOf names a call for a note: its tool and what it acted on.
func callOf(u *model.ToolUse) string { return u.Name + " " + summary(u.Input) }

// ErrDiscarded ends a run that the discard policy abandoned. A tool whose
// error wraps it (the Task tool, when its subagent was discarded) abandons
// the calling run too, instead of handing the model a failed call.
var ErrDiscarded = errors.New("discarded")

// truncatedText answers the calls of a response cut at max_tokens: the SDK
// replaces an incomplete input with {}, so running the call would do the
// wrong thing.
const truncatedText = "Not run: your response hit the output token limit, so this call's input was cut off. Make the call again with a smaller input (split a large file into several Write/Edit calls)."

// runTool executes one call. Every failure is a result the model sees,
// except a discard, which ends the run. The permission rules are applied
// first; an allowed effect whose intent is not durable yet (it needed a
// yes) gets it before it runs.
func (s *session) runTool(ctx context.Context, c resume.Call) (op store.Op, err error) {
	u := c.Use
	op = store.Op{ID: u.ID, Tool: u.Name}
	t, ok := s.reg[u.Name]
	switch {
	case !s.allows(u.Name):
		op.Content, op.IsError, op.Denied = fmt.Sprintf("Permission denied: the %s tool is not allowed for this agent. Allowed tools: %v.", u.Name, s.spec.Tools), true, true
		return op, nil
	case !ok:
		op.Content, op.IsError = fmt.Sprintf("No tool named %q exists. Available tools: %v.", u.Name, s.reg.Names()), true
		return op, nil
	case ctx.Err() != nil:
		op.Content, op.IsError, op.Cut = cutText, true, true
		return op, nil
	}
	if denied, ok, err := s.permit(ctx, u); err != nil || !ok {
		return denied, err
	}
	if s.isEffect(u.Name) && c.Runs == 0 && !s.intended(u) {
		if err := s.intend(ctx, u); err != nil {
			return op, err
		}
	}
	op.Class = t.Class().String()
	if t.Class() == tool.Effect {
		ctx = effectContext(ctx) // an interrupt waits for it to finish
	}
	res, err := safeRun(withCall(ctx, callInfo{id: u.ID, s: s}), t, u)
	switch {
	case errors.Is(err, ErrDiscarded):
		return op, err
	case ctx.Err() != nil:
		op.Content, op.IsError, op.Cut = cutText, true, true
	case err != nil:
		op.Content, op.IsError = "Tool failed: "+err.Error(), true
	default:
		op.Content, op.IsError = res.Content, res.IsError
	}
	s.postToolUse(ctx, u, &op)
	op.Content = s.rt.secrets.Redact(op.Content) // before it is stored, shown or sent
	return op, nil
}

// safeRun runs a tool, turning a panic into an error: a broken tool is a
// failed call, never a crashed run.
func safeRun(ctx context.Context, t tool.Tool, u *model.ToolUse) (res tool.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in %s: %v", u.Name, p)
		}
	}()
	return t.Run(tool.WithCall(ctx, u.ID), u.Input)
}

func (s *session) isEffect(name string) bool {
	t, ok := s.reg[name]
	return ok && s.allows(name) && t.Class() == tool.Effect
}

// toolDefs offers the model only the tools it is allowed (least privilege).
func (s *session) toolDefs() []model.ToolDef {
	var defs []model.ToolDef
	for _, name := range s.reg.Names() {
		if !s.allows(name) {
			continue
		}
		t := s.reg[name]
		defs = append(defs, model.ToolDef{Name: name, Description: t.Description(), Schema: t.Schema()})
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	return defs
}

// system is the system prompt: the agent's instructions, the project's
// standing instructions and where it works.
func (s *session) system() string {
	sys := s.spec.Instructions
	if sys != "" {
		sys += "\n\n"
	}
	if s.project != "" {
		sys += s.project + "\n\n"
	}
	return sys + "Working directory: " + s.rt.workspace
}

// callInfo tells a tool which call of which session it serves (the Task
// tool needs it to place its subagent's transcript).
type callInfo struct {
	id string
	s  *session
}

type callKey struct{}

func withCall(ctx context.Context, c callInfo) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

func callFrom(ctx context.Context) (callInfo, bool) {
	c, ok := ctx.Value(callKey{}).(callInfo)
	return c, ok
}
