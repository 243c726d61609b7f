package flower

import (
	"math"
	"strings"

	"github.com/flower-run/flower/model"
)

// CheckLimits refuses, as a *UsageError, limits that would silently do
// nothing or the wrong thing (issue 10): fewer than one turn, a negative
// or NaN budget, a budget on a model whose prices flower does not know
// (it could never be enforced). name is the model as ModelName takes it;
// call it after LoadConfig, which registers the prices flower.yaml
// declares.
func CheckLimits(name string, maxTurns int, budget float64) error {
	switch {
	case maxTurns < 1:
		return usage("--max-turns %d: a step needs at least 1 model response", maxTurns)
	case math.IsNaN(budget) || math.IsInf(budget, 0) || budget < 0:
		return usage("--budget %v: give USD as a number >= 0 (0: no limit)", budget)
	}
	name = strings.TrimPrefix(ModelName(name), "openai/")
	if _, known := model.Lookup(name); budget > 0 && !known && name != "demo" {
		return usage("--budget: flower does not know the prices of model %q, so it cannot hold a budget: give them in flower.yaml (models: {%q: {input_per_mtok: USD, output_per_mtok: USD}}), or drop --budget", name, name)
	}
	return nil
}
