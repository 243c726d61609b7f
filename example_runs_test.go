package flower_test

import (
	"context"
	"fmt"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/store"
)

// seedRuns puts a finished run and one in flight, as a crash leaves it,
// in the SQLite store of runDir.
func seedRuns(ctx context.Context, runDir, ws string) {
	s, err := flower.OpenStore(ctx, runDir, "")
	if err != nil {
		panic(err)
	}
	defer s.Close()
	now := time.Now()
	for i, r := range []store.Run{
		{ID: "20260101-090000-aaaaaa", Status: store.RunFinished, Outcome: "passed", Findings: "all goals met"},
		{ID: "20260101-100000-bbbbbb", Status: store.RunInFlight, Row: "work"},
	} {
		r.Workspace, r.Created, r.Updated = ws, now.Add(time.Duration(i)*time.Minute), now
		res := store.StepResult{Run: r.ID, Step: "work", OK: true, CostUSD: 0.25 * float64(i+1)}
		if err := s.Commit(ctx, store.Batch{Run: &r, Results: []store.StepResult{res}}); err != nil {
			panic(err)
		}
	}
}

// List a workspace's runs with what they cost, then abandon the one a
// crash left in flight, as flower ps, flower status and flower --reset do
// (Runs, Spending, Reset): tooling of your own over the same store.
func ExampleReset() {
	ws, runDir, done := tempDirs()
	defer done()
	ctx := context.Background()
	seedRuns(ctx, runDir, ws)

	s, err := flower.ReadStore(ctx, runDir, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	runs, _ := flower.Runs(ctx, s, runDir, ws, false)
	sp, _ := flower.Spending(ctx, s, ws)
	s.Close()
	fmt.Printf("in flight: %s at %s; spent $%.2f over %d runs; last: %s %s\n",
		runs[0].ID, runs[0].Row, sp.Total, sp.Runs, sp.Last.ID, sp.Last.Outcome)

	r, err := flower.Reset(ctx, runDir, "", ws, func() bool { return true }, nil)
	fmt.Println("discarded:", r.Discarded, err)
	// Output:
	// in flight: 20260101-100000-bbbbbb at work; spent $0.75 over 2 runs; last: 20260101-090000-aaaaaa passed
	// discarded: [20260101-100000-bbbbbb] <nil>
}

// Refuse limits that could not hold before anything starts: a budget on
// a model whose prices flower does not know.
func ExampleCheckLimits() {
	fmt.Println(flower.CheckLimits("openai/my-local-model", 50, 2))
	// Output: --budget: flower does not know the prices of model "my-local-model", so it cannot hold a budget: give them in flower.yaml (models: {"my-local-model": {input_per_mtok: USD, output_per_mtok: USD}}), or drop --budget
}
