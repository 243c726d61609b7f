package flower

import (
	"context"

	"github.com/flower-run/flower/store"
)

// Spent is what the runs of a workspace cost, as flower status shows it
// (issue 11: status shows the verdict and the cost).
type Spent struct {
	Total    float64    // every run's, finished or not
	Runs     int        // the runs Total counts (a run whose rows cannot be read is left out)
	Last     *store.Run // the newest run no longer in flight; nil if none
	LastCost float64    // Last's
}

// Spending adds up the cost of every step row of the runs of ws in s.
func Spending(ctx context.Context, s store.Store, ws string) (Spent, error) {
	runs, err := s.Runs(ctx, ws)
	if err != nil {
		return Spent{}, err
	}
	var sp Spent
	costs := make([]float64, len(runs))
	read := make([]bool, len(runs))
	for i, r := range runs {
		if costs[i], err = runCost(ctx, s, r.ID); err == nil {
			read[i] = true
			sp.Total += costs[i]
			sp.Runs++
		}
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Status == store.RunInFlight {
			continue
		}
		if read[i] {
			sp.Last, sp.LastCost = &runs[i], costs[i]
		}
		break
	}
	return sp, nil
}

// runCost is what the step rows of run id cost.
func runCost(ctx context.Context, s store.Store, id string) (float64, error) {
	rows, err := s.Results(ctx, id)
	cost := 0.0
	for _, row := range rows {
		cost += row.CostUSD
	}
	return cost, err
}
