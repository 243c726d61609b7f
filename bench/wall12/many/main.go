// Command many runs the wall12 session (bench/wall12/fake: 12 turns of
// Write, Bash and Read) 64 times on 2 processes, 32 at once in each,
// every session a flower.Host doing Once over the one PostgreSQL store
// its process shares (flower.Options.DB, as flower worker shares it).
// bench/dbos -session runs the same 64 sessions as DBOS workflows on 2
// executors, so that the two durable engines are compared on the same
// requests and tool calls (issue 19). It prints the wall time from the
// processes' start to their exit, sessions and model requests per
// minute, and the peak of the database's connections.
//
//	many -db SERVER -fake URL [-sandbox off]
//
// SERVER is a PostgreSQL server's postgres database; many creates a
// database of its own there and drops it at the end.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/worker"
)

const (
	sessions = 64
	procs    = 2
	turns    = 12 // model requests per session (bench/wall12/fake's Script)
)

func main() {
	server := flag.String("db", os.Getenv("FLOWER_TEST_POSTGRES"), "the PostgreSQL server (its postgres database)")
	fake := flag.String("fake", "", "the base URL of bench/wall12/fake")
	mode := flag.String("sandbox", "auto", "sandbox.mode of every session: auto (as flower ships) or off")
	db := flag.String("worker", "", "internal: run sessions in this process on this database URL")
	root := flag.String("root", "", "internal: the directory of the workspaces")
	from := flag.Int("from", 0, "internal: the first session of this process")
	flag.StringVar(&profile, "cpuprofile", "", "write each process's CPU profile to this path + its first session's number")
	flag.Parse()
	log.SetFlags(0)
	if *db != "" {
		if profile != "" {
			f, err := os.Create(fmt.Sprint(profile, *from))
			if err != nil {
				log.Fatal(err)
			}
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
		if err := runSessions(*db, *root, *from, *mode); err != nil {
			pprof.StopCPUProfile()
			log.Fatal(err)
		}
		return
	}
	if *server == "" || *fake == "" {
		log.Fatal("usage: many -db SERVER -fake URL [-sandbox off]")
	}
	if err := orchestrate(*server, *fake, *mode); err != nil {
		log.Fatal(err)
	}
}

// orchestrate makes a database and 64 workspaces, starts the processes,
// times them and checks what every session left.
func orchestrate(server, fake, mode string) error {
	ctx := context.Background()
	dbURL, drop, err := newDatabase(ctx, server)
	if err != nil {
		return err
	}
	defer drop()
	// The schema before the clock starts, as bench/dbos has it.
	db, err := postgres.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	db.Close()
	root, err := os.MkdirTemp("", "flower-many-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	for i := range sessions {
		if err := os.MkdirAll(workspace(root, i), 0o755); err != nil {
			return err
		}
	}
	stop, peak := sampleConnections(ctx, dbURL)
	start := time.Now()
	var cmds []*exec.Cmd
	for p := range procs {
		c := exec.Command(os.Args[0], "-worker", dbURL, "-root", root, "-from", fmt.Sprint(p*sessions/procs), "-sandbox", mode, "-cpuprofile", profile)
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		c.Env = append(os.Environ(), "ANTHROPIC_BASE_URL="+fake, "ANTHROPIC_API_KEY=test",
			"HOME="+root, "XDG_STATE_HOME="+filepath.Join(root, "state"), "XDG_CONFIG_HOME="+filepath.Join(root, "config"))
		if err := c.Start(); err != nil {
			return err
		}
		cmds = append(cmds, c)
	}
	var failed error
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			failed = fmt.Errorf("a process of sessions: %w", err)
		}
	}
	took := time.Since(start)
	stop()
	if failed != nil {
		return failed
	}
	if err := check(root); err != nil {
		return err
	}
	fmt.Printf("flower %d wall12 sessions (12 turns) on %d processes, sandbox %s: %.2f s, %.1f runs/min, %.0f requests/min, peak %d connections (not counting the sampler)\n",
		sessions, procs, mode, took.Seconds(), sessions/took.Minutes(), sessions*turns/took.Minutes(), *peak)
	return nil
}

// profile is -cpuprofile.
var profile string

func workspace(root string, i int) string { return filepath.Join(root, fmt.Sprint("ws", i)) }

// runSessions runs this process's 32 sessions side by side over one DB.
func runSessions(dbURL, root string, from int, mode string) error {
	ctx := context.Background()
	n := sessions / procs
	db, err := postgres.Open(ctx, dbURL, postgres.PoolSize(worker.PoolSize(n)))
	if err != nil {
		return err
	}
	defer db.Close()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = session(ctx, db, root, from+i, mode) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("session %d: %w", from+i, err)
		}
	}
	return nil
}

// session is one flower once, in process.
func session(ctx context.Context, db *postgres.DB, root string, i int, mode string) error {
	ws := workspace(root, i)
	cfg, err := flower.LoadConfig(ws)
	if err != nil {
		return err
	}
	cfg.Sandbox.Mode = config.SandboxMode(mode)
	h, err := flower.Open(ctx, flower.Options{Workspace: ws, RunDir: filepath.Join(root, fmt.Sprint("run", i)),
		DB: db, Config: &cfg, Model: "claude-sonnet-4-6"})
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.Start(ctx, flower.StartOptions{}); err != nil {
		return err
	}
	res := h.Once(ctx, "do the task", flower.OnceOptions{})
	if !res.OK || res.Turns != turns {
		return fmt.Errorf("ok=%v turns=%d: %s", res.OK, res.Turns, res.Error)
	}
	return nil
}

// check: every session left the file the script has it write, check and
// read back (bench/wall12/fake: notes.txt, 60 lines at the end).
func check(root string) error {
	for i := range sessions {
		data, err := os.ReadFile(filepath.Join(workspace(root, i), "notes.txt"))
		if err != nil {
			return fmt.Errorf("session %d: %w", i, err)
		}
		if n := strings.Count(string(data), "\n"); n != 60 {
			return fmt.Errorf("session %d: notes.txt has %d lines, want 60", i, n)
		}
	}
	return nil
}

// newDatabase creates a database of its own on server.
func newDatabase(ctx context.Context, server string) (dbURL string, drop func(), err error) {
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		return "", nil, err
	}
	name := fmt.Sprintf("flower_many_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close(ctx)
		return "", nil, err
	}
	drop = func() {
		admin.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)")
		admin.Close(ctx)
	}
	u, err := url.Parse(server)
	if err != nil {
		drop()
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), drop, nil
}

// sampleConnections counts the database's connections every 50 ms until
// stop; peak is the most seen, the sampler's own left out.
func sampleConnections(ctx context.Context, dbURL string) (stop func(), peak *int) {
	peak = new(int)
	done, quit := make(chan struct{}), make(chan struct{})
	sampler, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		close(done)
		return func() {}, peak
	}
	go func() {
		defer close(done)
		defer sampler.Close(ctx)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			var n int
			if err := sampler.QueryRow(ctx, `SELECT count(*) - 1 FROM pg_stat_activity WHERE datname = current_database()`).Scan(&n); err == nil {
				*peak = max(*peak, n)
			}
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(quit); <-done }, peak
}
