package project_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/project"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/workflow"
)

// childEnv carries, as JSON, the paths of the adoption a child runs.
const childEnv = "FLOWER_TEST_ADOPT_CHILD"

// adoption is one moved project: a state directory, the old and new paths
// of the workspace, and the run dir holding its state.
type adoption struct {
	Home, From, To, RunDir string
}

// newAdoption makes a project at From with a store and a high-water mark
// in RunDir, then renames it to To.
func newAdoption(t *testing.T) adoption {
	t.Helper()
	l := newLayout(t)
	a := adoption{Home: filepath.Dir(filepath.Dir(l.x.Dir)), From: l.ws(t, "a"), To: filepath.Join(l.parent, "b"), RunDir: t.TempDir()}
	if _, err := l.x.Keep(a.From, a.RunDir); err != nil {
		t.Fatal(err)
	}
	s := seedStore(t, a.RunDir, a.From)
	saveMark(t, s, a.RunDir, a.From)
	s.Close()
	if err := os.Rename(a.From, a.To); err != nil {
		t.Fatal(err)
	}
	return a
}

// run adopts the move as a start does: Find, Begin unless resumed, then
// Adopt in the run dir's store, moving the mark; nothing once Find finds
// the project bound to its new path.
func (a adoption) run() error {
	x := project.IndexIn(a.Home)
	f, err := x.Find(a.To, "/unused")
	if err != nil {
		return err
	}
	switch f.Kind {
	case project.Same: // a kill after the binding: adopted already
		return nil
	case project.None, project.Copied:
		return fmt.Errorf("Find = %+v, want Moved", f)
	}
	if !f.Resumed {
		if err := x.Begin(f, a.To); err != nil {
			return err
		}
	}
	s, err := sqlite.Open(filepath.Join(a.RunDir, "sessions.db"))
	if err != nil {
		return err
	}
	defer s.Close()
	return x.Adopt(context.Background(), s, f, a.To, func(from string) error { return workflow.MoveMark(a.RunDir, from, a.To) })
}

// TestAdoptChild is the child of TestAdoptKilled: it adopts the move its
// environment names, and is killed at the armed failpoint.
func TestAdoptChild(t *testing.T) {
	v := os.Getenv(childEnv)
	if v == "" {
		t.Skip("the child of TestAdoptKilled")
	}
	var a adoption
	if err := json.Unmarshal([]byte(v), &a); err != nil {
		t.Fatal(err)
	}
	if err := a.run(); err != nil {
		t.Fatal(err)
	}
}

// child runs TestAdoptChild for a in a new process with env added.
func child(t *testing.T, a adoption, env ...string) error {
	t.Helper()
	data, _ := json.Marshal(a)
	cmd := exec.Command(os.Args[0], "-test.run=^TestAdoptChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), append(env, childEnv+"="+string(data))...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
		return err
	}
	if err != nil {
		t.Fatalf("the adopting child: %v\n%s", err, out)
	}
	return nil
}

// TestAdoptKilled kills the adoption at each of its durable writes (the
// intent, the store's re-key, the mark, the binding: every fsync and
// rename of each): after every kill the project is bound to its old path
// or its new one, never neither, its records are all under one path, and
// the next start finishes the adoption (issue 22 item 3, DESIGN §3).
func TestAdoptKilled(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("in the child")
	}
	a := newAdoption(t)
	trace := filepath.Join(t.TempDir(), "trace")
	if err := child(t, a, failpoint.TraceEnv+"="+trace); err != nil {
		t.Fatalf("the traced child was killed: %v", err)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	writes := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(writes) < 4 {
		t.Fatalf("the adoption made %d durable writes, want at least the intent, the re-key, the mark and the binding:\n%s", len(writes), data)
	}
	for n, what := range writes {
		t.Run(strconv.Itoa(n+1), func(t *testing.T) {
			t.Logf("killed after write %d: %s", n+1, what)
			a := newAdoption(t)
			if err := child(t, a, fmt.Sprintf("%s=%s:%d", failpoint.Env, failpoint.DurablePoint, n+1)); err == nil {
				t.Fatalf("the child was not killed after %q", what)
			}
			checkBound(t, a)
			if err := a.run(); err != nil {
				t.Fatalf("the start after the kill: %v", err)
			}
			s, err := sqlite.Open(filepath.Join(a.RunDir, "sessions.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			id, _ := project.ReadID(a.To)
			checkAdopted(t, project.IndexIn(a.Home), s, id, a.From, a.To, a.RunDir)
			if err := workflow.CheckMark(context.Background(), s, a.RunDir, a.To); err != nil {
				t.Errorf("the mark after the adoption: %v", err)
			}
			if m := readMark(t, a.RunDir); m.Workspace != a.To {
				t.Errorf("the mark is of %s, want the new path %s", m.Workspace, a.To)
			}
		})
	}
}

// checkBound checks the state a kill left: the index binds the id to the
// old path or to the new one (which resolves to the run dir), and the
// store's records are all under one path.
func checkBound(t *testing.T, a adoption) {
	t.Helper()
	x := project.IndexIn(a.Home)
	id, err := project.ReadID(a.To)
	if err != nil || id == "" {
		t.Fatalf("the project id after the kill: %q, %v", id, err)
	}
	e, ok, err := x.Get(id)
	switch {
	case err != nil || !ok:
		t.Fatalf("no index entry after the kill: %v", err)
	case e.Workspace == a.From && e.To == "":
	case e.RunDir != a.RunDir:
		t.Errorf("index entry %+v lost the run dir %s", e, a.RunDir)
	default:
		if dir, ok := x.RunDir(a.To); !ok || dir != a.RunDir {
			t.Errorf("index entry %+v: the new path resolves to %q, %v; want %s", e, dir, ok, a.RunDir)
		}
	}
	s, err := sqlite.Open(filepath.Join(a.RunDir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	old, _ := s.Runs(ctx, a.From)
	now, _ := s.Runs(ctx, a.To)
	oldS, _ := s.Load(ctx, store.SessionKey(a.From, "s1"))
	nowS, _ := s.Load(ctx, store.SessionKey(a.To, "s1"))
	if len(old)+len(now) != 1 || len(oldS)+len(nowS) != 1 || len(old) != len(oldS) {
		t.Errorf("records split by the kill: runs %d old, %d new; entries %d old, %d new", len(old), len(now), len(oldS), len(nowS))
	}
}

func readMark(t *testing.T, runDir string) workflow.Mark {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(runDir, workflow.MarkFile))
	if err != nil {
		t.Fatal(err)
	}
	var m workflow.Mark
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// saveMark writes the run dir's high-water mark of ws as an export does.
func saveMark(t *testing.T, s store.Store, runDir, ws string) {
	t.Helper()
	if err := workflow.WriteMark(context.Background(), s, runDir, ws); err != nil {
		t.Fatal(err)
	}
}
