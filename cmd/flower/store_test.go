package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/postgres/pgtest"
)

// TestPostgresStore: with FLOWER_STORE a PostgreSQL URL, a run cut by
// SIGTERM in its work step is finished by the next wake from the database
// alone (no sessions.db in the run dir), paying only the cut request
// again (issue 14).
func TestPostgresStore(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	srv, env := fakeModel(t)
	env = append(env, storeEnv+"="+url)
	tr := newTrap("work", 2, syscall.SIGTERM)
	srv.onRequest(tr.onRequest)
	dir := t.TempDir()
	p := startFlower(t, dir, env, false, args(testTask)...)
	tr.arm(p)
	if r := p.wait(); p.signal() != syscall.SIGTERM {
		t.Fatalf("flower did not exit by SIGTERM (exit %d)\n%s%s", r.code, r.stdout, r.stderr)
	}
	ps := runFlower(t, dir, env, "ps")
	if ps.code != 0 || !strings.Contains(ps.stdout, "in_flight") {
		t.Fatalf("flower ps against the database: exit %d\n%s%s", ps.code, ps.stdout, ps.stderr)
	}
	r := runFlower(t, dir, env, args()...)
	if r.code != 0 {
		t.Fatalf("the wake after SIGTERM: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got, base := srv.Count(), perRun; got != base+1 {
		t.Errorf("%d model requests, want %d (an uninterrupted run's %d + the one cut)", got, base+1, base)
	}
	if _, err := os.Stat(filepath.Join(dir, "runs", flower.StoreFile)); err == nil {
		t.Errorf("a %s in the run dir: the store is the database", flower.StoreFile)
	}
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.Runs(context.Background(), "")
	if err != nil || len(runs) != 1 || runs[0].Status != store.RunFinished || runs[0].Outcome != "passed" {
		t.Fatalf("runs in the database: %+v, %v; want one passed", runs, err)
	}
}

// TestStoreRefused: a --store or FLOWER_STORE that is not a PostgreSQL URL
// is one usage line naming where it came from.
func TestStoreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := runFlower(t, dir, nil, "--store", "mysql://db", "ps")
	if r.code != exitUsage || !strings.Contains(r.stderr, `--store "mysql://db": want a postgres://`) ||
		strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Errorf("--store mysql://db: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runFlower(t, dir, []string{storeEnv + "=sessions.db"}, "status")
	if r.code != exitUsage || !strings.Contains(r.stderr, storeEnv+` "sessions.db"`) {
		t.Errorf("%s=sessions.db: exit %d, stderr %q", storeEnv, r.code, r.stderr)
	}
}

// TestPostgresSecondDriver: two flowers on two machines (two run dirs) of
// one workspace and one database: the second is refused at once, naming
// the first, as with the run dir's lock; flower ps shows the holder from
// the database; another workspace of the same database is free.
func TestPostgresSecondDriver(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	srv, env := fakeModel(t)
	env = append(env, storeEnv+"="+url)
	held, release := make(chan struct{}), make(chan struct{})
	var holdOnce, releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // before the server closes
	srv.onRequest(func(r *modeltest.Request) {
		holdOnce.Do(func() { close(held); <-release })
	})
	dir := t.TempDir()
	for _, d := range []string{"ws", "other"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a := startFlower(t, dir, env, false, args("-r", "machine-a", "--workspace", "ws", testTask)...)
	select {
	case <-held:
	case <-a.done:
		t.Fatalf("a ended early\n%s%s", a.stdout, a.stderr)
	}
	b := runFlower(t, dir, env, args("-r", "machine-b", "--workspace", "ws", testTask)...)
	if b.code != 1 || !strings.Contains(b.stderr, "run dir in use") || !strings.Contains(b.stderr, fmt.Sprintf("pid %d", a.cmd.Process.Pid)) ||
		len(strings.Split(strings.TrimSpace(b.stderr), "\n")) != 1 {
		t.Errorf("the second driver: exit %d\n%s%s", b.code, b.stdout, b.stderr)
	}
	ps := runFlower(t, dir, env, "-r", "machine-b", "--workspace", "ws", "ps")
	if want := fmt.Sprintf("driven by pid %d on ", a.cmd.Process.Pid); ps.code != 0 || !strings.Contains(ps.stdout, want) ||
		!strings.Contains(ps.stdout, "heartbeat") {
		t.Errorf("flower ps on another machine: exit %d, want %q and a heartbeat\n%s%s", ps.code, want, ps.stdout, ps.stderr)
	}
	releaseOnce.Do(func() { close(release) })
	if r := runFlower(t, dir, env, args("-r", "machine-b", "--workspace", "other", testTask)...); r.code != 0 {
		t.Errorf("another workspace of the database: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := a.wait(); r.code != 0 {
		t.Fatalf("a: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
