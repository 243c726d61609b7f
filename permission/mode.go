package permission

import (
	"fmt"
	"sync"
)

// Mode is Claude Code's permission mode: how a run treats the calls its
// rules leave open. Deny rules win in every mode.
type Mode string

// The modes of Claude Code's --permission-mode.
const (
	// ModeDefault applies the rules as written; with someone to ask (a
	// host's permission prompt), an effect call no allow rule names is
	// asked, as Claude Code asks before Bash or a file edit.
	ModeDefault Mode = "default"
	// ModeAcceptEdits runs file edits (Write, Edit) without asking.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModePlan runs no effect at all: the agent may look, not change.
	ModePlan Mode = "plan"
	// ModeBypass runs every call no deny rule matches, without asking.
	ModeBypass Mode = "bypassPermissions"
)

// ParseMode reads a mode as Claude Code spells it ("" is default).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeDefault, nil
	case ModeDefault, ModeAcceptEdits, ModePlan, ModeBypass:
		return m, nil
	}
	return "", fmt.Errorf("permission mode %q: use default, acceptEdits, plan or bypassPermissions", s)
}

// editTools are the tools acceptEdits lets run without asking.
var editTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

// Gate holds a run's mode, which a host may change while the run goes on
// (Claude Code's set_permission_mode), and applies it to the rules'
// decisions. A nil Gate leaves every decision as it is. Safe for
// concurrent use.
type Gate struct {
	mu   sync.Mutex
	mode Mode
	// askEffects: someone answers asks, so default asks the effect calls
	// no allow rule names instead of running them.
	askEffects bool
	hooked     func(tool string) bool // a host hook sees calls of these tools first
}

// NewGate returns a gate in mode; askEffects says that a host answers
// permission questions (Claude Code's --permission-prompt-tool).
func NewGate(mode Mode, askEffects bool) *Gate {
	return &Gate{mode: mode, askEffects: askEffects}
}

// Mode is the gate's mode now.
func (g *Gate) Mode() Mode {
	if g == nil {
		return ModeDefault
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.mode
}

// SetMode changes the mode for the calls decided from now on.
func (g *Gate) SetMode(m Mode) {
	g.mu.Lock()
	g.mode = m
	g.mu.Unlock()
}

// SetHooked names the tools a host's PreToolUse hook sees before they run
// (Claude Code's hook callbacks): their calls are asked, so that the asker
// runs the hook first; nil hooks none.
func (g *Gate) SetHooked(hooked func(tool string) bool) {
	g.mu.Lock()
	g.hooked = hooked
	g.mu.Unlock()
}

// Decide turns the rules' decision d on a call of tool into the mode's;
// effect says the tool changes things (tool.Effect).
func (g *Gate) Decide(d Decision, tool string, effect bool) Decision {
	if g == nil || d.Action == Deny {
		return d
	}
	m := g.decide(d, tool, effect)
	g.mu.Lock()
	hooked := g.hooked
	g.mu.Unlock()
	if m.Action != Deny && hooked != nil && hooked(tool) {
		return Decision{Action: Ask, Rule: m.Rule, Mode: g.Mode(), Hook: true, Then: m.Action}
	}
	return m
}

func (g *Gate) decide(d Decision, tool string, effect bool) Decision {
	switch g.Mode() {
	case ModePlan:
		if effect {
			return Decision{Action: Deny, Rule: "--permission-mode plan", Mode: ModePlan}
		}
	case ModeBypass:
		return Decision{Action: Allow, Rule: d.Rule}
	case ModeAcceptEdits:
		if editTools[tool] {
			return Decision{Action: Allow, Rule: d.Rule}
		}
		return g.ask(d, effect)
	default:
		return g.ask(d, effect)
	}
	return d
}

// ask is default's decision: an effect call that no rule allowed by name
// is asked when someone answers.
func (g *Gate) ask(d Decision, effect bool) Decision {
	if g.askEffects && effect && d.Action == Allow && d.Rule == "" {
		return Decision{Action: Ask, Mode: ModeDefault}
	}
	return d
}
