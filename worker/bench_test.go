package worker_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/postgres/pgtest"
	"github.com/flower-run/flower/worker"
)

// BenchmarkTwoWorkers64: 64 runs driven by 2 Workers in this process (32
// at once each, a DB each as on two machines), each run the starter flow
// of the demo model answering after 50 ms; reports runs/min and the
// peak of the workers' connections (application_name flower*). In
// process, so -cpuprofile shows where a run's time goes.
func BenchmarkTwoWorkers64(b *testing.B) {
	url := pgtest.URL(b)
	fakeModel(b, 50*time.Millisecond)
	ctx := context.Background()
	sampler, err := pgx.Connect(ctx, url+"&application_name=bench")
	if err != nil {
		b.Fatal(err)
	}
	defer sampler.Close(ctx)
	db := open(b, url+"&application_name=bench")
	var total time.Duration
	peak := 0
	for range b.N {
		submit(b, db, 64)
		start := time.Now()
		a := startBench(b, url)
		c := startBench(b, url)
		tick := time.NewTicker(50 * time.Millisecond)
		for !allFinished(b, db) {
			var n int
			if err := sampler.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE datname = current_database() AND application_name LIKE 'flower%'`).Scan(&n); err == nil {
				peak = max(peak, n)
			}
			<-tick.C
		}
		tick.Stop()
		total += time.Since(start)
		a.stop()
		c.stop()
	}
	b.ReportMetric(float64(64*b.N)/total.Minutes(), "runs/min")
	b.ReportMetric(float64(peak), "conns")
}

// allFinished: no run of the schema is in flight, in one query (polling
// each run's row, 64 queries every 50 ms, was load of its own).
func allFinished(b *testing.B, db *postgres.DB) bool {
	runs, err := db.RunsWith(context.Background(), store.RunInFlight)
	if err != nil {
		b.Fatal(err)
	}
	return len(runs) == 0
}

func startBench(b *testing.B, url string) *running {
	return start(b, worker.Options{DB: open(b, url, postgres.PoolSize(benchPool)), Concurrency: 32})
}

// benchPool is each worker's pool, as flower worker sizes it for 32 runs
// (PoolSize), unless FLOWER_BENCH_POOL says otherwise.
var benchPool = func() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("FLOWER_BENCH_POOL"), &n); err == nil && n > 0 {
		return n
	}
	return worker.PoolSize(32)
}()
