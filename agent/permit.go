package agent

import (
	"context"
	"fmt"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/permission"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
)

// PermissionAsker asks the person whether a call an ask rule matched may
// run (package human implements it). It returns the answer and how the
// question settled ("answered", or why not: "timeout", "declined",
// "over_budget"); call is the tool call's id, so that a call run again
// after a crash finds the answer already given instead of asking twice.
type PermissionAsker interface {
	AskPermission(ctx context.Context, call, question string, options []string) (answer, state string, err error)
}

// ToolAsker is a PermissionAsker that asks about the call itself, not a
// question about it: a host program (Claude Code's can_use_tool) shows the
// tool and its input its own way, and runs its hooks on it when d.Hook.
// The answer is as AskPermission's.
type ToolAsker interface {
	AskTool(ctx context.Context, u *model.ToolUse, d permission.Decision, question string, options []string) (answer, state string, err error)
}

// decide is the rules' decision on a call as the permission mode has it
// (effect: the call's tool changes things), with the ask rules the person
// allowed for this run taken as allowed.
func (r *Runtime) decide(u *model.ToolUse, effect bool) permission.Decision {
	d := r.gate.Decide(r.perms.Check(u.Name, u.Input), u.Name, effect)
	if d.Action != permission.Ask || d.Mode != "" {
		return d
	}
	r.grantMu.Lock()
	defer r.grantMu.Unlock()
	for _, a := range d.Asks {
		if !r.grants[a] {
			return d
		}
	}
	return permission.Decision{Action: permission.Allow, Rule: d.Rule}
}

// permitted reports whether a call may run as the rules stand, without
// asking: the calls whose intent the response's commit records.
func (s *session) permitted(u *model.ToolUse) bool {
	return s.rt.decide(u, s.isEffect(u.Name)).Action == permission.Allow
}

// permit applies the rules to a call about to run (R9.3). A denied call
// gets a denial result naming the rule; an asked one asks the person
// through the asker, and unattended (no asker, no one watching) is a
// denial with a note. ok is false when the call must not run; then op is
// its result. err is the store's, when a grant could not be kept.
func (s *session) permit(ctx context.Context, u *model.ToolUse) (op store.Op, ok bool, err error) {
	d := s.rt.decide(u, s.isEffect(u.Name))
	op = store.Op{ID: u.ID, Tool: u.Name, IsError: true, Denied: true}
	if d.Action != permission.Deny && s.rt.hooks != nil {
		h, err := s.preToolUse(ctx, u)
		if err != nil {
			return op, false, err
		}
		var blocked bool
		if d, blocked = withHook(d, h, u); blocked {
			op.Content = blockedMessage(u.Name, h.reason)
			return op, false, nil
		}
	}
	switch d.Action {
	case permission.Allow:
		return op, true, nil
	case permission.Deny:
		if d.Mode == permission.ModePlan {
			op.Content = fmt.Sprintf(planText, u.Name)
			return op, false, nil
		}
		op.Content = fmt.Sprintf("Permission denied: this %s call matches the deny rule %s in %s, so it was not run. Do not try to get around the rule; do the work another way, or say what you need.", u.Name, d.Rule, s.rt.originOf(d.Rule))
		return op, false, nil
	}
	why := "matches the ask rule " + d.Rule
	if d.Mode != "" {
		why = "changes things and no allow rule names it"
	} else if d.Unlisted {
		why = "is not one the allow rules list for " + u.Name
	}
	if d.Why != "" {
		why = "cannot be checked against the rules: " + d.Why
	}
	if s.rt.asker == nil {
		op.Content = fmt.Sprintf(unattendedText, u.Name, why, "there is no one to ask")
		return op, false, nil
	}
	where := " in " + s.rt.originOf(d.Rule)
	if d.Mode != "" {
		where = ""
	}
	s.notify(ctx, fmt.Sprintf("flower needs your permission to use %s", u.Name))
	q := fmt.Sprintf("Allow this %s call: %s  (%s%s)", u.Name, summary(u.Input), askReason(d), where)
	answer, state, err := s.ask(ctx, u, d, q)
	switch {
	case err != nil:
		op.Denied, op.Cut, op.Content = false, true, cutText
		return op, false, nil
	case state != "answered":
		op.Content = fmt.Sprintf(unattendedText, u.Name, why, "no one answered ("+state+")")
		return op, false, nil
	}
	switch permission.ParseReply(answer) {
	case permission.ForRun:
		if err := s.rt.grant(ctx, d.Asks); err != nil {
			return op, false, err
		}
		return op, true, nil
	case permission.Once:
		return op, true, nil
	}
	op.Content = fmt.Sprintf("Permission denied: the person refused this %s call (%s%s), so it was not run. Do not ask for it again; do the work another way.", u.Name, askReason(d), where)
	return op, false, nil
}

// originOf names the file rule came from (Options.RuleOrigin).
func (r *Runtime) originOf(rule string) string {
	if r.origin == nil || rule == "" {
		return "flower.yaml"
	}
	return r.origin(rule)
}

// ask puts the question to the asker, about the call itself when it can
// take one.
func (s *session) ask(ctx context.Context, u *model.ToolUse, d permission.Decision, q string) (string, string, error) {
	if ta, ok := s.rt.asker.(ToolAsker); ok {
		return ta.AskTool(ctx, u, d, q, permission.ReplyOptions)
	}
	return s.rt.asker.AskPermission(ctx, u.ID, q, permission.ReplyOptions)
}

// planText denies an effect call in plan mode.
const planText = "Permission denied: the session is in plan mode (--permission-mode plan), so this %s call, which changes things, was not run. Look and plan only; say what you would change."

// askReason says why a call is asked: its ask rule, or the allow rules of
// its tool that do not cover it.
func askReason(d permission.Decision) string {
	if d.Mode != "" {
		return "permission mode " + string(d.Mode)
	}
	if d.Why != "" {
		return "no rule can be checked against it: " + d.Why
	}
	if d.Unlisted {
		return "no allow rule covers it"
	}
	return "ask rule " + d.Rule
}

// unattendedText denies a call that needs a yes when no one can answer.
const unattendedText = "Permission denied: this %s call %s in flower.yaml, and %s; a call that needs a yes is not run without one. Do the work another way, or note it for the person."

// intend makes an allowed effect's intent durable before it runs, when
// the response's commit did not (the call needed a person's yes, or a
// resumed call was pending without one).
func (s *session) intend(ctx context.Context, u *model.ToolUse) error {
	op := store.Op{ID: u.ID, Tool: u.Name, Input: u.Input, Class: tool.Effect.String()}
	return s.append(ctx, store.Entry{Kind: store.KindOpStarted, Op: &op})
}

func (s *session) intended(u *model.ToolUse) bool { return s.intents[u.ID] }
