package resume

// Action is what the loop does with a pending call.
type Action string

// Actions, from Decide.
const (
	// Run the call: it never started, so nothing is repeated.
	Run Action = "run"
	// Again records an op_attempt, durable, and then runs the call again.
	Again Action = "retry"
	// Pass completes the call with a note and does not run it: the policy
	// is skip.
	Pass Action = "skip"
	// Exhausted completes the call with a note naming it and does not run
	// it: it already ran MaxRuns times without a result.
	Exhausted Action = "exhausted"
	// Abandon ends the run: the policy is discard.
	Abandon Action = "discard"
)

// Decide applies policy p to a pending call. Only an ambiguous call is
// subject to the policy; under Retry it runs again while its runs stay
// within MaxRuns, across any number of crashes and in-process retries,
// since the count is in the store.
func Decide(c Call, p Policy) Action {
	if !c.Ambiguous() {
		return Run
	}
	switch p.Effective() {
	case Skip:
		return Pass
	case Discard:
		return Abandon
	}
	if c.Runs >= MaxRuns {
		return Exhausted
	}
	return Again
}
