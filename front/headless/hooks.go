package headless

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/flower-run/flower/model"
)

// hookMatcher is one matcher of the hooks a host registered at initialize:
// the tools it matches (Claude Code's syntax: a name, a regexp such as
// "Edit|Write", or "" and "*" for every tool) and its callbacks.
type hookMatcher struct {
	Matcher   string   `json:"matcher"`
	Callbacks []string `json:"hookCallbackIds"`
	re        *regexp.Regexp
}

func (m *hookMatcher) matches(tool string) bool {
	return m.Matcher == "" || m.Matcher == "*" || (m.re != nil && m.re.MatchString(tool))
}

// setHooks keeps the host's hooks. Only PreToolUse is run (before a call,
// through the permission gate); the others are named on Warn.
func (s *Session) setHooks(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var hooks map[string][]*hookMatcher
	if err := json.Unmarshal(raw, &hooks); err != nil {
		return fmt.Errorf("initialize: hooks: %w", err)
	}
	for event, ms := range hooks {
		if event != "PreToolUse" {
			fmt.Fprintf(s.o.Warn, "flower: the host's %s hooks are not called: flower -p runs PreToolUse hooks only\n", event)
			continue
		}
		for _, m := range ms {
			re, err := regexp.Compile("^(?:" + m.Matcher + ")$")
			if err != nil {
				return fmt.Errorf("initialize: PreToolUse matcher %q: %w", m.Matcher, err)
			}
			m.re = re
		}
	}
	s.mu.Lock()
	s.pre = hooks["PreToolUse"]
	s.mu.Unlock()
	if s.o.Gate != nil && len(hooks["PreToolUse"]) > 0 {
		s.o.Gate.SetHooked(s.hooked)
	}
	return nil
}

func (s *Session) hooked(tool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.pre {
		if m.matches(tool) {
			return true
		}
	}
	return false
}

// preToolUse runs the host's PreToolUse callbacks matching u, in order:
// "deny" as soon as one denies (or blocks), "allow" when one allowed and
// none denied, "" when they leave it open, "closed" when the host is gone.
func (s *Session) preToolUse(ctx context.Context, u *model.ToolUse) (string, error) {
	s.mu.Lock()
	ms := s.pre
	s.mu.Unlock()
	input := map[string]any{"hook_event_name": "PreToolUse", "session_id": s.sessionID(), "transcript_path": "",
		"cwd": s.o.Init.Cwd, "permission_mode": string(s.o.Gate.Mode()), "tool_name": u.Name,
		"tool_input": toolInput(u), "tool_use_id": u.ID}
	verdict := ""
	for _, m := range ms {
		if !m.matches(u.Name) {
			continue
		}
		for _, id := range m.Callbacks {
			r, err := s.request(ctx, map[string]any{"subtype": "hook_callback", "callback_id": id, "input": input, "tool_use_id": u.ID})
			if err != nil {
				return "", err
			}
			if r.Subtype == "closed" {
				return "closed", nil
			}
			switch hookVerdict(r) {
			case "deny":
				return "deny", nil
			case "allow":
				verdict = "allow"
			}
		}
	}
	return verdict, nil
}

// hookVerdict reads a hook's output: decision block/approve, or
// hookSpecificOutput.permissionDecision deny/allow/ask. A failed callback
// decides nothing, as a failing hook command does in Claude Code.
func hookVerdict(r controlReply) string {
	if r.Subtype != "success" {
		return ""
	}
	var out struct {
		Decision string `json:"decision"`
		Specific struct {
			Permission string `json:"permissionDecision"`
		} `json:"hookSpecificOutput"`
	}
	if json.Unmarshal(r.Response, &out) != nil {
		return ""
	}
	switch {
	case out.Decision == "block" || out.Specific.Permission == "deny":
		return "deny"
	case out.Decision == "approve" || out.Specific.Permission == "allow":
		return "allow"
	}
	return ""
}
