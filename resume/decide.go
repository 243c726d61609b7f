package resume

// Action is what the loop does with a pending call.
type Action string

// Actions, from Decide.
const (
	// RunCall runs the call: it never started, so nothing is repeated.
	RunCall Action = "run"
	// RetryCall records an op_attempt, durable, and then runs the call again.
	RetryCall Action = "retry"
	// SkipCall completes the call with a note and does not run it: the policy
	// is skip.
	SkipCall Action = "skip"
	// GiveUp completes the call with a note naming it and does not run
	// it: it already ran MaxRuns times without a result.
	GiveUp Action = "exhausted"
	// DiscardRun ends the run: the policy is discard.
	DiscardRun Action = "discard"
)

// MaxIdempotentRuns bounds the executions of an ambiguous idempotent call.
// A repeat of it is not a duplicate effect, so it is not held to MaxRuns;
// the bound only stops a call that itself kills flower from looping.
const MaxIdempotentRuns = 4

// Decide applies policy p to a pending call. Only an ambiguous call is
// subject to the policy; under Retry it runs again while its runs stay
// within MaxRuns, across any number of crashes and in-process retries,
// since the count is in the store. An idempotent call runs again under
// Retry and Skip alike (a repeat changes nothing, so skipping would only
// lose its result), within MaxIdempotentRuns; Discard still abandons the
// run, since a step marked discard must not go on past an unknown outcome.
func Decide(c Call, p Policy) Action {
	if !c.Ambiguous() {
		return RunCall
	}
	eff := p.Effective()
	switch {
	case eff == Discard:
		return DiscardRun
	case c.Idempotent && c.Runs >= MaxIdempotentRuns:
		return GiveUp
	case c.Idempotent:
		return RetryCall
	case eff == Skip:
		return SkipCall
	case c.Runs >= MaxRuns:
		return GiveUp
	}
	return RetryCall
}
