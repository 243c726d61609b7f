package flower_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/flower-run/flower"
)

// TestCheckLimits refuses the limits that would silently do nothing, as
// usage errors that name the fix (issue 10).
func TestCheckLimits(t *testing.T) {
	for _, c := range []struct {
		model    string
		maxTurns int
		budget   float64
		want     string // "" for accepted
	}{
		{flower.DefaultModel, 100, 1, ""},
		{"demo", 1, 5, ""},
		{"openai/my-local-model", 10, 0, ""},
		{"openai/my-local-model", 10, 1, `prices of model "my-local-model"`},
		{flower.DefaultModel, 0, 0, "--max-turns 0"},
		{flower.DefaultModel, 10, -1, "--budget -1"},
		{flower.DefaultModel, 10, math.NaN(), "--budget NaN"},
	} {
		err := flower.CheckLimits(c.model, c.maxTurns, c.budget)
		var ue *flower.UsageError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s, %d turns, $%v: %v", c.model, c.maxTurns, c.budget, err)
		case c.want != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s, %d turns, $%v: %v, want a usage error saying %q", c.model, c.maxTurns, c.budget, err, c.want)
		}
	}
}
