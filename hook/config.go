// Package hook runs Claude Code hooks (issue 21): the commands a project's
// .claude/settings.json lists under "hooks", given a JSON description of
// the event on stdin, whose exit code and JSON output can block a tool
// call, a prompt or the end of a turn. The contract is Claude Code's:
//
//   - exit 0: success; stdout may be a JSON object (decision, reason,
//     continue, stopReason, systemMessage, hookSpecificOutput with
//     permissionDecision and additionalContext); for UserPromptSubmit and
//     SessionStart plain stdout is context for the model.
//   - exit 2: blocking; stderr is the reason given to the model (or, for
//     UserPromptSubmit, to the person).
//   - any other exit: a non-blocking error, shown to the person.
//
// Commands run through bash -c in the run's sandbox, in the project
// directory, with CLAUDE_PROJECT_DIR set, under a timeout (60 s unless
// the hook sets "timeout" in seconds). The hooks of one event run one
// after the other in the order the files list them (Claude Code runs them
// in parallel; in order is deterministic and gives the same decisions).
package hook

import (
	"fmt"
	"regexp"
	"strings"
)

// Event names a point where hooks run, as settings.json spells it.
type Event string

// The events flower runs hooks at. PreCompact is flower's handoff (the
// point where Claude Code would compact the context).
const (
	PreToolUse       Event = "PreToolUse"
	PostToolUse      Event = "PostToolUse"
	UserPromptSubmit Event = "UserPromptSubmit"
	Stop             Event = "Stop"
	SubagentStop     Event = "SubagentStop"
	SessionStart     Event = "SessionStart"
	SessionEnd       Event = "SessionEnd"
	PreCompact       Event = "PreCompact"
	Notification     Event = "Notification"
)

// Events are the event names a settings file may use.
var Events = []Event{PreToolUse, PostToolUse, UserPromptSubmit, Stop, SubagentStop,
	SessionStart, SessionEnd, PreCompact, Notification}

// Config is settings.json's "hooks": per event, groups of commands, each
// group run when its matcher matches.
type Config map[Event][]Group

// Group is one entry of an event's list.
type Group struct {
	// Matcher selects what the group runs for: the tool name for
	// PreToolUse and PostToolUse, the source for SessionStart (startup,
	// resume), the trigger for PreCompact (auto). "" and "*" match
	// everything; a plain name or Name|Other matches those exactly;
	// anything else is a regular expression, as in Claude Code.
	Matcher string    `json:"matcher"`
	Hooks   []Command `json:"hooks"`
}

// Command is one hook.
type Command struct {
	Type    string  `json:"type"` // "command", the only type flower runs
	Command string  `json:"command"`
	Timeout float64 `json:"timeout,omitempty"` // seconds; 0 is DefaultTimeout
}

// Merge is c with o's groups after c's, event by event: every file's
// hooks run, as in Claude Code.
func (c Config) Merge(o Config) Config {
	if len(o) == 0 {
		return c
	}
	out := Config{}
	for _, src := range []Config{c, o} {
		for ev, gs := range src {
			out[ev] = append(out[ev], gs...)
		}
	}
	return out
}

// Count is how many hooks c lists.
func (c Config) Count() int {
	n := 0
	for _, gs := range c {
		for _, g := range gs {
			n += len(g.Hooks)
		}
	}
	return n
}

// Check reports the first problem of c, naming where it is as a JSON path
// (hooks.PreToolUse[0].hooks[1].command) and saying what to write.
func (c Config) Check() error {
	for ev, gs := range c {
		if !known(ev) {
			return &CheckError{Path: "hooks." + string(ev), Key: string(ev),
				Msg: fmt.Sprintf("unknown event %q (use one of %s)", ev, eventList())}
		}
		for i, g := range gs {
			at := fmt.Sprintf("hooks.%s[%d]", ev, i)
			if _, err := compile(g.Matcher); err != nil {
				return &CheckError{Path: at + ".matcher", Key: g.Matcher,
					Msg: fmt.Sprintf("matcher %q is not a regular expression: %v (write a tool name, Name|Other, or a valid regexp)", g.Matcher, err)}
			}
			if len(g.Hooks) == 0 {
				return &CheckError{Path: at + ".hooks", Key: "hooks",
					Msg: `no hooks in this group (write "hooks": [{"type": "command", "command": "..."}])`}
			}
			for j, h := range g.Hooks {
				if err := h.check(fmt.Sprintf("%s.hooks[%d]", at, j)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (h Command) check(at string) error {
	switch {
	case h.Type != "command":
		return &CheckError{Path: at + ".type", Key: h.Type,
			Msg: fmt.Sprintf(`type %q is not run by flower (write "type": "command")`, h.Type)}
	case strings.TrimSpace(h.Command) == "":
		return &CheckError{Path: at + ".command", Key: "command", Msg: "empty command (write the shell command to run)"}
	case h.Timeout < 0:
		return &CheckError{Path: at + ".timeout", Key: "timeout", Msg: "negative timeout (write seconds, such as 30)"}
	}
	return nil
}

// CheckError is a problem Check found. Key is the text nearest to it in
// the file (the event name, the matcher, the type), so that a reader of
// the file can place it.
type CheckError struct {
	Path, Key, Msg string
}

func (e *CheckError) Error() string { return e.Path + ": " + e.Msg }

func known(ev Event) bool {
	for _, k := range Events {
		if k == ev {
			return true
		}
	}
	return false
}

func eventList() string {
	names := make([]string, len(Events))
	for i, e := range Events {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}

var plainMatcher = regexp.MustCompile(`^[A-Za-z0-9_|-]*$`)

// compile turns a matcher into a test of a name.
func compile(m string) (func(string) bool, error) {
	m = strings.TrimSpace(m)
	if m == "" || m == "*" {
		return func(string) bool { return true }, nil
	}
	if plainMatcher.MatchString(m) {
		names := strings.Split(m, "|")
		return func(s string) bool {
			for _, n := range names {
				if n == s {
					return true
				}
			}
			return false
		}, nil
	}
	re, err := regexp.Compile(m)
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}

// Matches reports whether the group runs for name.
func (g Group) Matches(name string) bool {
	f, err := compile(g.Matcher)
	return err == nil && f(name)
}
