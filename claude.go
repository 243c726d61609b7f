package flower

import (
	"os"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/hook"
)

// What a Claude Code project's settings make of a run (issue 21): its
// env set in flower's environment, so that the model's tools and hooks
// see it as in Claude Code, and its hooks run by the runtime.

// claudeEnv sets the settings files' env; the rules were merged into
// h.rules by config.Config.PermissionRules.
func (h *Host) claudeEnv() {
	for k, v := range h.cfg.Claude.Env {
		_ = os.Setenv(k, v) // a bad name fails here and is simply not set
	}
}

// hooks runs the settings files' hooks in the run's sandbox, with Bash's
// environment; nil when there are none.
func (h *Host) hooks() *hook.Runner {
	if h.cfg.Claude.Hooks.Count() == 0 {
		return nil
	}
	return &hook.Runner{Config: h.cfg.Claude.Hooks, Dir: h.ws, Sandbox: h.box, Env: h.toolEnviron}
}

// subagents are the settings' .claude/agents as the Task tool takes them.
func (h *Host) subagents() []agent.Subagent {
	out := make([]agent.Subagent, len(h.cfg.Subagents))
	for i, a := range h.cfg.Subagents {
		out[i] = agent.Subagent{Name: a.Name, Description: a.Description, Tools: a.Tools, Model: a.Model, Prompt: a.Prompt}
	}
	return out
}
