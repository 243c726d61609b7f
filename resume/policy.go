package resume

// Policy says what resume does with an ambiguous op: a side-effecting op
// whose intent is durable but whose result is not, so nobody knows whether
// its effect happened (SPEC R5.4). Policies are plain values: config parses
// flower.yaml into them, an embedder builds them in Go and links no YAML
// parser.
type Policy string

// The policies. The zero Policy means "not set here" and falls through to
// the next, less specific setting.
const (
	// Retry runs the op again, at most twice in all (R5.7): see MaxRuns.
	Retry Policy = "retry"
	// Skip completes the op with a note and does not run it again.
	Skip Policy = "skip"
	// Discard abandons the whole run: for effects that must never happen
	// twice and cannot be assumed to have happened (publishing, payments).
	Discard Policy = "discard"
	// Prompt is legacy: resume never blocks on a person, so it is Retry.
	Prompt Policy = "prompt"
)

// Effective is the policy resume applies: Prompt and unset mean Retry.
func (p Policy) Effective() Policy {
	if p == Prompt || p == "" {
		return Retry
	}
	return p
}

// Valid reports whether p is one of the four named policies.
func (p Policy) Valid() bool {
	switch p {
	case Retry, Skip, Discard, Prompt:
		return true
	}
	return false
}

// Policies choose a Policy for an ambiguous call of a tool inside a step.
// The step is the top-level agent's name: a subagent's calls take the
// policy of the step that started it. The zero value retries everything.
type Policies struct {
	Default     Policy
	PerStep     map[string]Policy
	PerTool     map[string]Policy
	PerStepTool map[string]map[string]Policy // step -> tool -> policy
}

// For is the effective policy of a call of tool inside step. The most
// specific setting wins: step and tool, then step, then tool, then the
// default. A step policy such as `publish: discard` states the safety of
// the whole step's outside effect, so a generic `Bash: retry` must not undo
// it. The result is never Prompt or "".
func (ps Policies) For(step, tool string) Policy {
	if p := ps.PerStepTool[step][tool]; p != "" {
		return p.Effective()
	}
	if p := ps.PerStep[step]; p != "" {
		return p.Effective()
	}
	if p := ps.PerTool[tool]; p != "" {
		return p.Effective()
	}
	return ps.Default.Effective()
}
