package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/postgres/pgtest"
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
