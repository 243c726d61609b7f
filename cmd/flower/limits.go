package main

import (
	"github.com/flower-run/flower"
	"github.com/flower-run/flower/workflow"
)

// checkLimits is flower.CheckLimits with the CLI's exit codes.
func checkLimits(modelFlag string, maxTurns int, budget float64) error {
	return fail(flower.CheckLimits(modelFlag, maxTurns, budget))
}

// checkRounds refuses a negative --rounds.
func checkRounds(rounds int) error {
	if rounds < 0 {
		return usageErr("--rounds %d: give 0 or more work rounds after a failed verdict", rounds)
	}
	return nil
}

// judgeRounds maps --rounds to the judge's: 0 is no work round after a
// failed verdict (the judge's own zero value means its default).
func judgeRounds(rounds int) int {
	if rounds == 0 {
		return workflow.NoRework
	}
	return rounds
}
