package agent

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
)

// cutText is the result of a call cut by an interrupt or a cancelled run.
const cutText = "[interrupted: the person stopped this call before it finished]"

// runTools runs the calls of one response in order, appending each result
// as soon as it exists, so a completed effect is never run again. Once the
// turn is cancelled the remaining calls are answered as cut, keeping the
// session consistent.
func (s *session) runTools(ctx context.Context, uses []*model.ToolUse, ambiguous map[string]bool) error {
	for _, u := range uses {
		op, err := s.resolve(ctx, u, ambiguous[u.ID])
		if err != nil {
			return err
		}
		failpoint.Hit("after-effect") // the call ran; its result is not durable yet
		if err := s.append(ctx, store.Entry{Kind: store.KindResult, Op: &op}); err != nil {
			return err
		}
		failpoint.Hit("after-result")
		kind := event.ToolResult
		if op.Denied {
			kind = event.Denied
		}
		s.emit(event.Event{Kind: kind, Tool: u.Name, Text: op.Content,
			Payload: map[string]any{"id": u.ID, "is_error": op.IsError}})
	}
	return nil
}

// skippedText completes an ambiguous call under the skip policy.
const skippedText = "[flower] A crash cut this call after it started and before its result was recorded, so it may or may not have taken effect. Under the resume policy \"skip\" it was not run again. Check its effect before relying on it."

// resolve runs a call, applying the resume policy when its outcome is
// unknown: an effect whose intent is durable but whose result is not
// (R5.4). retry runs it again, skip completes it with a note, discard
// abandons the run.
func (s *session) resolve(ctx context.Context, u *model.ToolUse, ambiguous bool) (store.Op, error) {
	if !ambiguous {
		return s.runTool(ctx, u), nil
	}
	policy := s.rt.policies.PolicyFor(s.spec.Name, u.Name)
	s.emit(event.Event{Kind: event.Retry, Tool: u.Name,
		Text:    fmt.Sprintf("a call cut by a crash (%s %s): policy %s", u.Name, summary(u.Input), policy),
		Payload: map[string]any{"id": u.ID, "policy": string(policy), "ambiguous": true}})
	switch policy {
	case config.Skip:
		return store.Op{ID: u.ID, Tool: u.Name, Content: skippedText}, nil
	case config.Discard:
		return store.Op{}, fmt.Errorf("%w: %s call %s was cut by a crash and the resume policy is discard", ErrDiscarded, u.Name, u.ID)
	}
	return s.runTool(ctx, u), nil
}

// ErrDiscarded ends a run that the discard policy abandoned.
var ErrDiscarded = errors.New("discarded")

// truncatedText answers the calls of a response cut at max_tokens: the SDK
// replaces an incomplete input with {}, so running the call would do the
// wrong thing.
const truncatedText = "Not run: your response hit the output token limit, so this call's input was cut off. Make the call again with a smaller input (split a large file into several Write/Edit calls)."

// runTool executes one call. Every failure is a result the model sees.
func (s *session) runTool(ctx context.Context, u *model.ToolUse) (op store.Op) {
	op = store.Op{ID: u.ID, Tool: u.Name}
	t, ok := s.rt.tools[u.Name]
	switch {
	case s.allowed != nil && !s.allowed[u.Name]:
		op.Content, op.IsError, op.Denied = fmt.Sprintf("Permission denied: the %s tool is not allowed for this agent. Allowed tools: %v.", u.Name, s.spec.Tools), true, true
		return op
	case !ok:
		op.Content, op.IsError = fmt.Sprintf("No tool named %q exists. Available tools: %v.", u.Name, s.rt.tools.Names()), true
		return op
	case ctx.Err() != nil:
		op.Content, op.IsError, op.Cut = cutText, true, true
		return op
	}
	op.Class = t.Class().String()
	res, err := safeRun(withCall(ctx, callInfo{id: u.ID, s: s}), t, u)
	switch {
	case ctx.Err() != nil:
		op.Content, op.IsError, op.Cut = cutText, true, true
	case err != nil:
		op.Content, op.IsError = "Tool failed: "+err.Error(), true
	default:
		op.Content, op.IsError = res.Content, res.IsError
	}
	return op
}

// safeRun runs a tool, turning a panic into an error: a broken tool is a
// failed call, never a crashed run.
func safeRun(ctx context.Context, t tool.Tool, u *model.ToolUse) (res tool.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in %s: %v", u.Name, p)
		}
	}()
	return t.Run(ctx, u.Input)
}

func (s *session) isEffect(name string) bool {
	t, ok := s.rt.tools[name]
	return ok && (s.allowed == nil || s.allowed[name]) && t.Class() == tool.Effect
}

// toolDefs offers the model only the tools it is allowed (least privilege).
func (s *session) toolDefs() []model.ToolDef {
	var defs []model.ToolDef
	for _, name := range s.rt.tools.Names() {
		if s.allowed != nil && !s.allowed[name] {
			continue
		}
		t := s.rt.tools[name]
		defs = append(defs, model.ToolDef{Name: name, Description: t.Description(), Schema: t.Schema()})
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	return defs
}

// system is the system prompt: the agent's instructions and where it works.
func (s *session) system() string {
	sys := s.spec.Instructions
	if sys != "" {
		sys += "\n\n"
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
