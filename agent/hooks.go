package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/hook"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/permission"
	"github.com/flower-run/flower/store"
)

// The project's Claude Code hooks (package hook, issue 21). A PreToolUse
// hook's decision is a durable entry (store.KindHook) before its call
// runs: a wake finds it and reuses it, so the hook never runs twice for
// one call, and a call it blocked is answered as blocked without running.

// hookInput is the part of a hook's stdin every event shares.
func (s *session) hookInput(ev hook.Event) hook.Input {
	return hook.Input{SessionID: s.id, TranscriptPath: s.transcript(), Cwd: s.rt.workspace, Event: ev,
		PermissionMode: "default"}
}

// transcript names the session for a hook: flower keeps it in its store,
// not in a file, so this is where `flower show` would print it from.
func (s *session) transcript() string {
	return filepath.Join(s.rt.workspace, ".flower", "sessions", s.id)
}

// preToolUse is the PreToolUse hooks' decision on u: the one recorded
// for it, else the hooks run now and their decision made durable.
func (s *session) preToolUse(ctx context.Context, u *model.ToolUse) (hookDecision, error) {
	if d, ok := s.hookDecisions()[u.ID]; ok {
		return d, nil
	}
	if !s.rt.hooks.Has(hook.PreToolUse, u.Name) {
		return hookDecision{}, nil
	}
	in := s.hookInput(hook.PreToolUse)
	in.ToolName, in.ToolInput, in.ToolUseID = u.Name, u.Input, u.ID
	out := s.rt.hooks.Run(ctx, in, u.Name)
	s.hookNotes(out)
	d := hookDecision{permission: out.Permission, block: out.Block || out.Stop, reason: out.Reason}
	if out.Stop && !out.Block {
		d.reason = out.StopReason
	}
	op := store.Op{ID: u.ID, Tool: u.Name, Denied: d.block, Content: d.reason}
	if err := s.append(ctx, store.Entry{Kind: store.KindHook, Op: &op, Text: d.permission}); err != nil {
		return d, err
	}
	return d, nil
}

// hookDecision is what the PreToolUse hooks said of one call.
type hookDecision struct {
	permission string // allow, ask, deny or ""
	block      bool
	reason     string
}

// hookDecisions are the decisions recorded since the last response (the
// calls that may still run are its calls).
func (s *session) hookDecisions() map[string]hookDecision {
	out := map[string]hookDecision{}
	for i := len(s.entries) - 1; i >= 0; i-- {
		e := s.entries[i]
		if e.Kind == store.KindAssistant {
			break
		}
		if e.Kind == store.KindHook && e.Op != nil {
			out[e.Op.ID] = hookDecision{permission: e.Text, block: e.Op.Denied, reason: e.Op.Content}
		}
	}
	return out
}

// withHook combines the rules' decision with the hooks': a deny rule
// wins; a hook's deny blocks; a hook's allow lets an asked call run
// without asking; a hook's ask asks about a call the rules allowed.
//
// A hook's ask is about this call: "allow for this run" allows this exact
// call again (tool and input), never every call a hook asks about.
func withHook(d permission.Decision, h hookDecision, u *model.ToolUse) (permission.Decision, bool) {
	switch {
	case d.Action == permission.Deny:
		return d, false
	case h.block:
		return d, true
	case h.permission == "allow":
		return permission.Decision{Action: permission.Allow, Rule: d.Rule}, false
	case h.permission == "ask" && d.Action == permission.Allow:
		return permission.Decision{Action: permission.Ask, Rule: "PreToolUse hook", Asks: []string{"hook " + u.Name + " " + string(u.Input)}}, false
	}
	return d, false
}

// blockedText is the result of a call a PreToolUse hook blocked.
const blockedText = "Blocked by the project's PreToolUse hook: this %s call was not run.\n%s"

// postToolUse runs the PostToolUse hooks on a call's result and adds
// what they say for the model (a block's reason, additionalContext).
func (s *session) postToolUse(ctx context.Context, u *model.ToolUse, op *store.Op) {
	if !s.rt.hooks.Has(hook.PostToolUse, u.Name) {
		return
	}
	in := s.hookInput(hook.PostToolUse)
	in.ToolName, in.ToolInput, in.ToolUseID = u.Name, u.Input, u.ID
	in.ToolResponse = map[string]any{"content": op.Content, "is_error": op.IsError}
	out := s.rt.hooks.Run(ctx, in, u.Name)
	s.hookNotes(out)
	if out.Block {
		op.Content += "\n\n[PostToolUse hook] " + out.Reason
	}
	if out.Context != "" {
		op.Content += "\n\n[PostToolUse hook context] " + out.Context
	}
}

// hookNotes shows the person what hooks said for them.
func (s *session) hookNotes(out hook.Outcome) {
	for _, n := range out.Notes {
		s.emit(event.Event{Kind: event.Error, Text: "hook: " + n, Payload: map[string]any{"hook": true}})
	}
}

// blocked is the result of a call whose recorded PreToolUse decision
// blocked it, if it has one: a resumed call is answered from it without
// running, whatever the resume policy.
func (s *session) blocked(u *model.ToolUse) (store.Op, bool) {
	d, ok := s.hookDecisions()[u.ID]
	if !ok || !d.block {
		return store.Op{}, false
	}
	return store.Op{ID: u.ID, Tool: u.Name, IsError: true, Denied: true, Content: blockedMessage(u.Name, d.reason)}, true
}

func blockedMessage(tool, reason string) string {
	return fmt.Sprintf(blockedText, tool, reason)
}

// promptHooks runs the SessionStart and UserPromptSubmit hooks of a
// top-level run's prompt and returns the prompt with their context after
// it; the prompt and its context are then durable together, so a wake
// (which has no new prompt) runs neither again. A UserPromptSubmit block
// ends the run with its reason, for the person.
func (s *session) promptHooks(ctx context.Context, prompt string) (string, error) {
	if !s.top || s.rt.hooks == nil {
		return prompt, nil
	}
	source := "startup"
	if s.res.Resumed {
		source = "resume"
	}
	var extra []string
	if s.rt.hooks.Has(hook.SessionStart, source) {
		in := s.hookInput(hook.SessionStart)
		in.Source = source
		out := s.rt.hooks.Run(ctx, in, source)
		s.hookNotes(out)
		extra = append(extra, out.Context)
	}
	if s.rt.hooks.Has(hook.UserPromptSubmit, "") {
		in := s.hookInput(hook.UserPromptSubmit)
		in.Prompt = prompt
		out := s.rt.hooks.Run(ctx, in, "")
		s.hookNotes(out)
		if out.Block || out.Stop {
			return "", fmt.Errorf("%w: %s", ErrHookBlocked, orElse(out.Reason, out.StopReason))
		}
		extra = append(extra, out.Context)
	}
	for _, e := range extra {
		if e != "" {
			prompt += "\n\n[context from the project's hooks]\n" + e
		}
	}
	return prompt, nil
}

// ErrHookBlocked ends a run whose prompt a UserPromptSubmit hook blocked.
var ErrHookBlocked = errors.New("blocked by the project's UserPromptSubmit hook")

// stopHooks runs the Stop (SubagentStop for a subagent) hooks when the
// model has finished; a block is a message for the model, which goes on.
func (s *session) stopHooks(ctx context.Context) (more bool, err error) {
	ev := hook.Stop
	if !s.top {
		ev = hook.SubagentStop
	}
	if !s.rt.hooks.Has(ev, "") {
		return false, nil
	}
	in := s.hookInput(ev)
	active := s.stopHookActive
	in.StopHookActive = &active
	out := s.rt.hooks.Run(ctx, in, "")
	s.hookNotes(out)
	if !out.Block || out.Stop {
		return false, nil
	}
	s.stopHookActive = true
	return true, s.append(ctx, userText("[flower] The project's "+string(ev)+" hook did not let you stop yet: "+out.Reason))
}

func orElse(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// preCompact runs the PreCompact hooks (trigger auto) as the session is
// about to hand off, flower's counterpart of Claude Code's compaction.
// What they print is for the person; a block does not stop the handoff,
// which the window forces.
func (s *session) preCompact(ctx context.Context) {
	if !s.rt.hooks.Has(hook.PreCompact, "auto") {
		return
	}
	in := s.hookInput(hook.PreCompact)
	in.Trigger = "auto"
	s.hookNotes(s.rt.hooks.Run(ctx, in, "auto"))
}

// notify runs the Notification hooks: flower is waiting for the person.
func (s *session) notify(ctx context.Context, message string) {
	if !s.rt.hooks.Has(hook.Notification, "") {
		return
	}
	in := s.hookInput(hook.Notification)
	in.Message = message
	s.hookNotes(s.rt.hooks.Run(ctx, in, ""))
}
