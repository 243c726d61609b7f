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

// decide is the rules' decision on a call, with the ask rules the person
// allowed for this run taken as allowed.
func (r *Runtime) decide(u *model.ToolUse) permission.Decision {
	d := r.perms.Check(u.Name, u.Input)
	if d.Action != permission.Ask {
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
	return s.rt.decide(u).Action == permission.Allow
}

// permit applies the rules to a call about to run (R9.3). A denied call
// gets a denial result naming the rule; an asked one asks the person
// through the asker, and unattended (no asker, no one watching) is a
// denial with a note. ok is false when the call must not run; then op is
// its result. err is the store's, when a grant could not be kept.
func (s *session) permit(ctx context.Context, u *model.ToolUse) (op store.Op, ok bool, err error) {
	d := s.rt.decide(u)
	op = store.Op{ID: u.ID, Tool: u.Name, IsError: true, Denied: true}
	if d.Action != permission.Deny && s.rt.hooks != nil {
		h, err := s.preToolUse(ctx, u)
		if err != nil {
			return op, false, err
		}
		var blocked bool
		if d, blocked = withHook(d, h); blocked {
			op.Content = blockedMessage(u.Name, h.reason)
			return op, false, nil
		}
	}
	switch d.Action {
	case permission.Allow:
		return op, true, nil
	case permission.Deny:
		op.Content = fmt.Sprintf("Permission denied: this %s call matches the deny rule %s in %s, so it was not run. Do not try to get around the rule; do the work another way, or say what you need.", u.Name, d.Rule, s.rt.originOf(d.Rule))
		return op, false, nil
	}
	why := "matches the ask rule " + d.Rule
	if d.Unlisted {
		why = "is not one the allow rules list for " + u.Name
	}
	if d.Why != "" {
		why = "cannot be checked against the rules: " + d.Why
	}
	if s.rt.asker == nil {
		op.Content = fmt.Sprintf(unattendedText, u.Name, why, "there is no one to ask")
		return op, false, nil
	}
	s.notify(ctx, fmt.Sprintf("flower needs your permission to use %s", u.Name))
	q := fmt.Sprintf("Allow this %s call: %s  (%s in %s)", u.Name, summary(u.Input), askReason(d), s.rt.originOf(d.Rule))
	answer, state, err := s.rt.asker.AskPermission(ctx, u.ID, q, permission.ReplyOptions)
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
	op.Content = fmt.Sprintf("Permission denied: the person refused this %s call (%s in %s), so it was not run. Do not ask for it again; do the work another way.", u.Name, askReason(d), s.rt.originOf(d.Rule))
	return op, false, nil
}

// originOf names the file rule came from (Options.RuleOrigin).
func (r *Runtime) originOf(rule string) string {
	if r.origin == nil || rule == "" {
		return "flower.yaml"
	}
	return r.origin(rule)
}

// askReason says why a call is asked: its ask rule, or the allow rules of
// its tool that do not cover it.
func askReason(d permission.Decision) string {
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
