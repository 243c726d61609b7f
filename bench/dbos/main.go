// Command dbos-bench measures DBOS Transact Go on the workload of flower's
// BenchmarkWorkers64 (issue 19), on the same PostgreSQL server: 64
// workflows queued, 2 executor processes (worker concurrency 32 each),
// each workflow 14 durable steps, each step a request to a fake model
// server answering after 50 ms with a 1 KB body, which DBOS checkpoints.
// It prints the wall time from the executors' start to the 64th success,
// runs per minute and the peak of the database's connections.
//
//	go run . -db 'postgres://flower@/postgres?host=/tmp/flower-pg-worker/sock'
//
// It lives in a module of its own so that flower's go.mod does not gain
// DBOS.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower/bench/dbos/durable"
)

const (
	runs     = 64
	workers  = 2
	steps    = 14
	queue    = "runs"
	workflow = "run"
)

func main() {
	server := flag.String("db", os.Getenv("FLOWER_TEST_POSTGRES"), "the PostgreSQL server (its postgres database)")
	worker := flag.String("worker", "", "internal: run as an executor on this database URL")
	flag.StringVar(&sessions.fake, "session", "", "each workflow is the wall12 session (durable.Session) against bench/wall12/fake at this URL, not 14 bare steps")
	flag.StringVar(&sessions.request, "request", "", "with -session: the request body whose system prompt and tools the sessions send")
	flag.Parse()
	if *worker != "" {
		executor(*worker)
		return
	}
	if err := orchestrate(*server); err != nil {
		log.Fatal(err)
	}
}

// sessions is the -session workload: 64 agent sessions of 12 turns, each
// in a workspace of its own, the workload of bench/wall12/many (issue 19:
// flower and DBOS side by side on the same requests and tool calls).
var sessions struct {
	fake, request string
}

// input is a workflow's: where the fake model is.
type input struct {
	Model string `json:"model"`
	N     int    `json:"n"`
}

// run is the workflow: 14 steps, each one model request.
func run(ctx dbos.Context, in input) (int, error) {
	total := 0
	for i := range steps {
		body, err := dbos.RunAsStep(ctx, func(ctx context.Context) (string, error) {
			req, _ := http.NewRequestWithContext(ctx, "POST", in.Model, strings.NewReader(fmt.Sprintf(`{"run":%d,"step":%d}`, in.N, i)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return string(b), err
		}, dbos.WithStepName(fmt.Sprint("model", i)))
		if err != nil {
			return 0, err
		}
		total += len(body)
	}
	return total, nil
}

// executor runs the queue's workflows until SIGTERM.
func executor(dbURL string) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	d, err := dbos.NewContext(context.Background(), dbos.Config{AppName: "bench", DatabaseURL: dbURL,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	dbos.RegisterWorkflow(d, run, dbos.WithWorkflowName(workflow))
	dbos.RegisterWorkflow(d, durable.Session, dbos.WithWorkflowName(durable.Name))
	if _, err := dbos.RegisterQueue(d, queue, dbos.WithWorkerConcurrency(runs/workers),
		dbos.WithQueueBasePollingInterval(20*time.Millisecond)); err != nil {
		log.Fatal(err)
	}
	if err := dbos.Launch(d); err != nil {
		log.Fatal(err)
	}
	<-ctx.Done()
	dbos.Shutdown(d, 10*time.Second)
}

func orchestrate(server string) error {
	if server == "" {
		return fmt.Errorf("-db or FLOWER_TEST_POSTGRES: the PostgreSQL server")
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		return err
	}
	defer admin.Close(ctx)
	dbName := fmt.Sprintf("dbos_bench_%d", time.Now().Unix())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+dbName); err != nil {
		return err
	}
	defer admin.Exec(ctx, "DROP DATABASE "+dbName+" WITH (FORCE)")
	u, err := url.Parse(server)
	if err != nil {
		return err
	}
	u.Path = "/" + dbName
	dbURL := u.String()

	body := strings.Repeat("x", 1024)
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		time.Sleep(50 * time.Millisecond)
		io.WriteString(w, body)
	}))
	defer model.Close()

	// The schema, and the queue's rows, before the clock starts.
	client, err := dbos.NewClient(ctx, dbos.ClientConfig{DatabaseURL: dbURL, AppName: "bench",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		// A client verifies the schema, never creates it: an executor does.
		boot := exec.Command(os.Args[0], "-worker", dbURL)
		boot.Stderr = os.Stderr
		if err := boot.Start(); err != nil {
			return err
		}
		for client == nil {
			time.Sleep(100 * time.Millisecond)
			client, _ = dbos.NewClient(ctx, dbos.ClientConfig{DatabaseURL: dbURL, AppName: "bench",
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		}
		boot.Process.Signal(syscall.SIGTERM)
		boot.Wait()
	}
	root, err := os.MkdirTemp("", "dbos-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	for i := range runs {
		if err := enqueue(client, model.URL, root, i); err != nil {
			return fmt.Errorf("enqueue: %w", err)
		}
	}
	dbos.Shutdown(client, 5*time.Second)

	sampler, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer sampler.Close(ctx)
	start := time.Now()
	var procs []*exec.Cmd
	for range workers {
		c := exec.Command(os.Args[0], "-worker", dbURL)
		c.Stderr = os.Stderr
		c.Env = append(os.Environ(), "ANTHROPIC_BASE_URL="+sessions.fake, "ANTHROPIC_API_KEY=test")
		if err := c.Start(); err != nil {
			return err
		}
		procs = append(procs, c)
	}
	peak := 0
	for {
		var conns, done int
		if err := sampler.QueryRow(ctx, `SELECT count(*) - 1 FROM pg_stat_activity WHERE datname = current_database()`).Scan(&conns); err == nil {
			peak = max(peak, conns)
		}
		var failed int
		sampler.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'SUCCESS'), count(*) FILTER (WHERE status = 'ERROR')
			FROM dbos.workflow_status`).Scan(&done, &failed)
		if failed > 0 {
			return fmt.Errorf("%d workflows failed", failed)
		}
		if done == runs {
			break
		}
		if time.Since(start) > 10*time.Minute {
			return fmt.Errorf("%d of %d workflows done after 10 minutes", done, runs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(start)
	for _, c := range procs {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
	}
	what, requests := fmt.Sprintf("workflows × %d steps", steps), steps
	if sessions.fake != "" {
		if err := checkSessions(root); err != nil {
			return err
		}
		what, requests = "wall12 sessions (12 turns)", 12
	}
	fmt.Printf("DBOS %d %s on %d executors: %.2f s, %.1f runs/min, %.0f requests/min, peak %d connections (not counting the sampler)\n",
		runs, what, workers, took.Seconds(), runs/took.Minutes(), float64(runs*requests)/took.Minutes(), peak)
	return nil
}

// enqueue queues run i: 14 bare steps against model, or with -session a
// wall12 session in a workspace of its own under root.
func enqueue(client dbos.Client, model, root string, i int) error {
	if sessions.fake == "" {
		_, err := dbos.Enqueue[int](client, queue, workflow, input{Model: model, N: i})
		return err
	}
	dir := filepath.Join(root, fmt.Sprint("ws", i))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	_, err := dbos.Enqueue[string](client, queue, durable.Name, durable.Task{Prompt: "do the task",
		Request: sessions.request, Model: "claude-sonnet-4-6", Dir: dir, Quiet: true})
	return err
}

// checkSessions: every session left the file the script has it write,
// checked and read back (bench/wall12/fake: notes.txt, 60 lines at the end).
func checkSessions(root string) error {
	for i := range runs {
		data, err := os.ReadFile(filepath.Join(root, fmt.Sprint("ws", i), "notes.txt"))
		if err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
		if n := strings.Count(string(data), "\n"); n != 60 {
			return fmt.Errorf("session %d: notes.txt has %d lines, want 60", i, n)
		}
	}
	return nil
}
