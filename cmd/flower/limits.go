package main

import (
	"math"
	"os"
	"strings"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/workflow"
)

// checkLimits refuses limits that would silently do nothing or the wrong
// thing (issue 10): a negative or NaN budget, a budget on a model whose
// prices flower does not know (it could never be enforced), fewer than one
// turn.
func checkLimits(modelFlag string, maxTurns int, budget float64) error {
	switch {
	case maxTurns < 1:
		return usageErr("--max-turns %d: a step needs at least 1 model response", maxTurns)
	case math.IsNaN(budget) || math.IsInf(budget, 0) || budget < 0:
		return usageErr("--budget %v: give USD as a number >= 0 (0: no limit)", budget)
	}
	name := modelName(modelFlag)
	if _, known := model.Lookup(name); budget > 0 && !known && name != "demo" {
		return usageErr("--budget: flower does not know the prices of model %q, so it cannot hold a budget: give them in flower.yaml (models: {%q: {input_per_mtok: USD, output_per_mtok: USD}}), or drop --budget", name, name)
	}
	return nil
}

// modelName is the model chooseBackend would use, without starting it.
func modelName(flag string) string {
	name := flag
	if name == "" {
		name = os.Getenv("FLOWER_MODEL")
	}
	if name == "" {
		name = flower.DefaultModel
	}
	return strings.TrimPrefix(name, "openai/")
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
