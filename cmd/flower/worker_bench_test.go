package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/postgres/pgtest"
	"github.com/flower-run/flower/worker"
)

// BenchmarkWorkers: runs per minute with 1, 2 and 4 workers (concurrency
// 1 each) sharing a PostgreSQL store, each run the starter flow (14 model
// responses) against the fake model answering every request after 50 ms.
// Every iteration submits benchRuns runs to a fresh schema and times them
// from the workers' start to the last run's finish. Run it with
// -benchtime 1x: an iteration is several seconds.
func BenchmarkWorkers(b *testing.B) {
	bin := plainFlower(b)
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", n), func(b *testing.B) {
			var total time.Duration
			for range b.N {
				total += benchWorkers(b, bin, n)
			}
			b.ReportMetric(float64(benchRuns*b.N)/total.Minutes(), "runs/min")
		})
	}
}

const benchRuns = 8

func benchWorkers(b *testing.B, bin string, workers int) time.Duration {
	ctx := context.Background()
	url := pgtest.URL(b)
	srv := modeltest.NewAnthropic(func(r *modeltest.Request) modeltest.Turn {
		t := play(r)
		if t.Fault == nil {
			t.Fault = &modeltest.Fault{Delay: 50 * time.Millisecond}
		}
		return t
	})
	defer srv.Close()
	dir := b.TempDir()
	env := append(os.Environ(), "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=test", storeEnv+"="+url, "HOME="+dir, "XDG_STATE_HOME="+stateRoot)
	command := func(args ...string) *exec.Cmd {
		c := exec.Command(bin, args...)
		c.Dir, c.Env = dir, env
		return c
	}
	for i := range benchRuns {
		ws := filepath.Join(dir, fmt.Sprint("ws", i))
		if err := os.Mkdir(ws, 0o755); err != nil {
			b.Fatal(err)
		}
		if out, err := command("submit", "--workspace", ws, testTask).CombinedOutput(); err != nil {
			b.Fatalf("submit: %v\n%s", err, out)
		}
	}
	db, err := postgres.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	var procs []*exec.Cmd
	for i := range workers {
		c := command("worker", "--poll", "20ms", "--ask-timeout", "0", "-r", filepath.Join(dir, fmt.Sprint("worker", i)))
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		procs = append(procs, c)
	}
	until(b, "all runs finish", func() bool {
		runs, err := db.Runs(ctx, "")
		n := 0
		for _, r := range runs {
			if r.Status == store.RunFinished && r.Outcome == "passed" {
				n++
			}
		}
		return err == nil && n == benchRuns
	})
	took := time.Since(start)
	for _, c := range procs {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
	}
	return took
}

// BenchmarkWorkers64: issue 19's measure, 64 runs submitted to a fresh
// schema and 2 worker processes (--concurrency 32 each) driving them in
// process, each run the starter flow against the fake model answering
// every request after 50 ms; timed from the workers' start to the last
// run's finish. Reports runs/min and the peak of the workers' PostgreSQL
// connections (pg_stat_activity, application_name flower*, sampled every
// 50 ms), and the peak of all the database's connections. Run it with
// -benchtime 1x.
func BenchmarkWorkers64(b *testing.B) {
	bin := plainFlower(b)
	var total time.Duration
	var peak, peakAll int
	var requests int64
	for range b.N {
		took, p, all, n := bench64(b, bin)
		total += took
		peak, peakAll = max(peak, p), max(peakAll, all)
		requests += n
	}
	b.ReportMetric(float64(64*b.N)/total.Minutes(), "runs/min")
	b.ReportMetric(float64(requests)/total.Minutes(), "requests/min")
	b.ReportMetric(total.Seconds()/float64(b.N), "s/64runs")
	b.ReportMetric(float64(peak), "worker-conns")
	b.ReportMetric(float64(peakAll), "db-conns")
}

// bench64 also returns how many model requests the 64 runs made: the
// issue's measure (requests per minute) where a run of flower and one of
// the DBOS loop differ in size.
func bench64(b *testing.B, bin string) (took time.Duration, peak, peakAll int, requests int64) {
	const runs, workers = 64, 2
	ctx := context.Background()
	url := pgtest.URL(b)
	var served atomic.Int64
	srv := modeltest.NewAnthropic(func(r *modeltest.Request) modeltest.Turn {
		served.Add(1)
		t := play(r)
		if t.Fault == nil {
			t.Fault = &modeltest.Fault{Delay: 50 * time.Millisecond}
		}
		return t
	})
	defer srv.Close()
	dir := b.TempDir()
	env := append(os.Environ(), "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=test", storeEnv+"="+url, "HOME="+dir, "XDG_STATE_HOME="+stateRoot)
	// The benchmark's own connections say so, apart from the workers'.
	own := url + "&application_name=bench"
	db, err := postgres.Open(ctx, own)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for i := range runs {
		ws := filepath.Join(dir, fmt.Sprint("ws", i))
		if err := os.Mkdir(ws, 0o755); err != nil {
			b.Fatal(err)
		}
		if _, err := worker.Submit(ctx, db, ws, testTask, worker.AskTimeout(0)); err != nil {
			b.Fatal(err)
		}
	}
	sampler, err := pgx.Connect(ctx, own)
	if err != nil {
		b.Fatal(err)
	}
	defer sampler.Close(ctx)
	start := time.Now()
	var procs []*exec.Cmd
	for i := range workers {
		c := exec.Command(bin, "worker", "--concurrency", fmt.Sprint(runs/workers), "--poll", "20ms", "--ask-timeout", "0",
			"-r", filepath.Join(dir, fmt.Sprint("worker", i)))
		c.Dir, c.Env = dir, env
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		procs = append(procs, c)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		var n, all int
		if err := sampler.QueryRow(ctx, `SELECT count(*) FILTER (WHERE application_name LIKE 'flower%'), count(*)
			FROM pg_stat_activity WHERE datname = current_database()`).Scan(&n, &all); err == nil {
			peak, peakAll = max(peak, n), max(peakAll, all)
		}
		done := 0
		rs, err := db.Runs(ctx, "")
		for _, r := range rs {
			if r.Status == store.RunFinished && r.Outcome == "passed" {
				done++
			}
		}
		if err == nil && done == runs {
			break
		}
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("%d of %d runs passed after 10 minutes", done, runs)
		}
		<-tick.C
	}
	took = time.Since(start)
	for _, c := range procs {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
	}
	return took, peak, peakAll, served.Load()
}
