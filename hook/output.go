package hook

import (
	"encoding/json"
	"fmt"
	"strings"
)

// output is the JSON a hook may print on stdout (exit 0).
type output struct {
	Continue      *bool  `json:"continue"`
	StopReason    string `json:"stopReason"`
	SystemMessage string `json:"systemMessage"`
	Decision      string `json:"decision"` // "block"; PreToolUse's legacy "approve"
	Reason        string `json:"reason"`
	Specific      struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		AdditionalContext        string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// fold adds one hook's result to out.
func fold(out *Outcome, ev Event, h Command, res result) {
	name := fmt.Sprintf("%s hook %q", ev, short(h.Command))
	switch {
	case res.err != nil:
		out.Notes = append(out.Notes, fmt.Sprintf("%s: %v", name, res.err))
	case res.code == 2:
		out.Block, out.Reason = true, orDefault(strings.TrimSpace(res.stderr), name+" blocked this (exit 2, no message)")
		if ev == PreToolUse {
			out.Permission = "deny"
		}
	case res.code != 0:
		out.Notes = append(out.Notes, fmt.Sprintf("%s failed (exit %d): %s", name, res.code, short(res.stderr)))
	default:
		foldStdout(out, ev, name, res.stdout)
	}
}

// foldStdout reads a successful hook's stdout: a JSON object, or text.
func foldStdout(out *Outcome, ev Event, name, stdout string) {
	text := strings.TrimSpace(stdout)
	var o output
	if !strings.HasPrefix(text, "{") || json.Unmarshal([]byte(text), &o) != nil {
		if text != "" && (ev == UserPromptSubmit || ev == SessionStart) {
			out.Context = join(out.Context, text)
		}
		return
	}
	if o.SystemMessage != "" {
		out.Notes = append(out.Notes, o.SystemMessage)
	}
	out.Context = join(out.Context, o.Specific.AdditionalContext)
	if o.Continue != nil && !*o.Continue {
		out.Stop, out.StopReason = true, orDefault(o.StopReason, name+" stopped the run")
	}
	reason := orDefault(o.Specific.PermissionDecisionReason, o.Reason)
	switch pd := o.Specific.PermissionDecision; {
	case ev == PreToolUse && (pd == "deny" || o.Decision == "block"):
		out.Block, out.Permission = true, "deny"
		out.Reason = orDefault(reason, name+" denied this call")
	case ev == PreToolUse && pd == "ask":
		if out.Permission != "deny" {
			out.Permission, out.Reason = "ask", reason
		}
	case ev == PreToolUse && (pd == "allow" || o.Decision == "approve"):
		if out.Permission == "" {
			out.Permission, out.Reason = "allow", reason
		}
	case o.Decision == "block":
		out.Block, out.Reason = true, orDefault(reason, name+" blocked this")
	}
}

func join(a, b string) string {
	switch {
	case b == "":
		return a
	case a == "":
		return b
	}
	return a + "\n\n" + b
}
