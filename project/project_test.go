package project_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/internal/proctest"
	"github.com/flower-run/flower/project"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// layout is a state directory and a parent of workspaces, all temporary.
type layout struct {
	x      project.Index
	parent string
}

func newLayout(t *testing.T) layout {
	return layout{x: project.IndexIn(t.TempDir()), parent: t.TempDir()}
}

// ws makes the workspace name under the parent.
func (l layout) ws(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(l.parent, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (l layout) find(t *testing.T, ws string) project.Found {
	t.Helper()
	f, err := l.x.Find(ws, "/state/"+filepath.Base(ws))
	if err != nil {
		t.Fatalf("Find(%s): %v", ws, err)
	}
	return f
}

// TestFind: a first start makes an id bound to the workspace; later starts
// find it the same; a renamed workspace is found moved, a copy whose
// original is still there gets a new id (issue 22 item 3).
func TestFind(t *testing.T) {
	l := newLayout(t)
	a := l.ws(t, "a")
	if f := l.find(t, a); f.Kind != project.None {
		t.Fatalf("Find before any id = %+v, want None", f)
	}
	if _, err := os.Stat(filepath.Join(a, project.IDFile)); err == nil {
		t.Fatalf("Find wrote an id")
	}
	first, err := l.x.Keep(a, "/state/a")
	if err != nil || first.Kind != project.Same || !first.Made || first.ID == "" {
		t.Fatalf("Keep = %+v, %v; want Same with a new id", first, err)
	}
	if again, err := l.x.Keep(a, "/state/a"); err != nil || again.Made || again.ID != first.ID {
		t.Fatalf("Keep again = %+v, %v; want the same id, not made", again, err)
	}
	if id, err := project.ReadID(a); err != nil || id != first.ID {
		t.Fatalf("ReadID = %q, %v; want %s", id, err, first.ID)
	}
	if again := l.find(t, a); again.Kind != project.Same || again.Made || again.ID != first.ID {
		t.Errorf("second Find = %+v, want Same, id %s", again, first.ID)
	}
	if dir, ok := l.x.RunDir(a); !ok || dir != "/state/a" {
		t.Errorf("RunDir(a) = %q, %v; want /state/a", dir, ok)
	}

	b := filepath.Join(l.parent, "b")
	if err := os.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	moved := l.find(t, b)
	if moved.Kind != project.Moved || moved.ID != first.ID || moved.From != a || moved.Entry.RunDir != "/state/a" || moved.Resumed {
		t.Fatalf("Find after the rename = %+v, want Moved from %s", moved, a)
	}
	if _, ok := l.x.RunDir(b); ok {
		t.Errorf("RunDir(b) resolves before the move is adopted")
	}

	c := l.ws(t, "c")
	copyID(t, b, c)
	if f := l.find(t, c); f.Kind != project.Moved {
		t.Errorf("Find in a copy of a moved project whose old path is gone = %+v, want Moved (a's state has no other claimant)", f)
	}
	if err := l.x.Begin(moved, b); err != nil {
		t.Fatal(err)
	}
	if f := l.find(t, b); f.Kind != project.Moved || !f.Resumed {
		t.Errorf("Find after Begin = %+v, want Moved, Resumed", f)
	}
	if dir, ok := l.x.RunDir(b); !ok || dir != "/state/a" {
		t.Errorf("RunDir(b) after Begin = %q, %v; want the old run dir", dir, ok)
	}
	if _, err := l.x.Find(c, "/state/c"); !errors.Is(err, project.ErrHalfMoved) || !strings.Contains(err.Error(), "run flower in "+b) {
		t.Errorf("Find elsewhere during a half-done move = %v, want ErrHalfMoved naming %s", err, b)
	}
}

// TestFindCopy: a copy of a project whose original is in place gets a new
// id and an entry of its own; the original keeps its binding.
func TestFindCopy(t *testing.T) {
	l := newLayout(t)
	a, c := l.ws(t, "a"), l.ws(t, "c")
	orig, err := l.x.Keep(a, "/state/a")
	if err != nil {
		t.Fatal(err)
	}
	copyID(t, a, c)
	f := l.find(t, c)
	if f.Kind != project.Copied || f.From != a || f.ID == orig.ID {
		t.Fatalf("Find in the copy = %+v, want Copied from %s with a new id", f, a)
	}
	if id, _ := project.ReadID(c); id != f.ID {
		t.Errorf("the copy's id file holds %q, want %s", id, f.ID)
	}
	if g := l.find(t, a); g.Kind != project.Same || g.ID != orig.ID {
		t.Errorf("Find in the original after the copy = %+v, want Same, id %s", g, orig.ID)
	}
	if g := l.find(t, c); g.Kind != project.Same || g.ID != f.ID {
		t.Errorf("Find in the copy again = %+v, want Same, id %s", g, f.ID)
	}
}

// TestFindBadID: an id file that holds no id is refused in one line that
// names the file and the fix.
func TestFindBadID(t *testing.T) {
	l := newLayout(t)
	a := l.ws(t, "a")
	writeFile(t, filepath.Join(a, project.IDFile), "<<<merge conflict\n")
	_, err := l.x.Find(a, "/state/a")
	if !errors.Is(err, project.ErrBadID) || !strings.Contains(err.Error(), filepath.Join(a, project.IDFile)) ||
		!strings.Contains(err.Error(), "delete it") || strings.Contains(err.Error(), "\n") {
		t.Errorf("Find with a bad id file = %v", err)
	}
}

func copyID(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(from, project.IDFile))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(to, project.IDFile), string(data))
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAdopt: Adopt re-keys the store's records to the new path, runs
// then, and binds the new path; a second Adopt changes nothing.
func TestAdopt(t *testing.T) {
	l := newLayout(t)
	a, runDir := l.ws(t, "a"), t.TempDir()
	if _, err := l.x.Keep(a, runDir); err != nil {
		t.Fatal(err)
	}
	s := seedStore(t, runDir, a)
	b := filepath.Join(l.parent, "b")
	if err := os.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	f := l.find(t, b)
	if err := l.x.Begin(f, b); err != nil {
		t.Fatal(err)
	}
	var thenFrom string
	for range 2 {
		if err := l.x.Adopt(context.Background(), s, f, b, func(from string) error { thenFrom = from; return nil }); err != nil {
			t.Fatalf("Adopt: %v", err)
		}
		checkAdopted(t, l.x, s, f.ID, a, b, runDir)
	}
	if thenFrom != a {
		t.Errorf("then got %q, want the old path %s", thenFrom, a)
	}
}

// seedStore makes the SQLite store of runDir with a run and a session of
// workspace ws.
func seedStore(t *testing.T, runDir, ws string) *sqlite.DB {
	t.Helper()
	s, err := sqlite.Open(filepath.Join(runDir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	now := time.Date(2026, 12, 6, 20, 0, 0, 0, time.UTC)
	key := store.SessionKey(ws, "s1")
	err = s.Commit(context.Background(), store.Batch{
		Run:     &store.Run{ID: "r1", Workspace: ws, Status: store.RunInFlight, Step: "work", Session: "s1", Created: now, Updated: now},
		Bind:    []store.Binding{{Workspace: ws, Step: "work", Session: "s1"}},
		Meta:    []store.Meta{{Key: key, Workspace: ws, Created: now}},
		Entries: []store.Entry{{UUID: "e1", Key: key, Kind: store.KindNote, Time: now, Text: "done one"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkAdopted checks that the store's records are under to and none
// under from, and that the index binds id to to and runDir.
func checkAdopted(t *testing.T, x project.Index, s store.Store, id, from, to, runDir string) {
	t.Helper()
	ctx := context.Background()
	if es, err := s.Load(ctx, store.SessionKey(to, "s1")); err != nil || len(es) != 1 || es[0].Key != store.SessionKey(to, "s1") {
		t.Errorf("the session under the new path: %+v, %v", es, err)
	}
	if runs, err := s.Runs(ctx, to); err != nil || len(runs) != 1 {
		t.Errorf("runs of the new path: %+v, %v", runs, err)
	}
	if l, err := s.Lineage(ctx, to); err != nil || l.Steps["work"] != "s1" {
		t.Errorf("lineage of the new path: %+v, %v", l, err)
	}
	if runs, _ := s.Runs(ctx, from); len(runs) != 0 {
		t.Errorf("runs still under the old path: %+v", runs)
	}
	if e, ok, err := x.Get(id); err != nil || !ok || e != (project.Entry{Workspace: to, RunDir: runDir}) {
		t.Errorf("index entry = %+v, %v, %v; want the new path bound to %s", e, ok, err, runDir)
	}
}

// TestAsNobody runs the tests of this package as uid 65534.
func TestAsNobody(t *testing.T) {
	proctest.AsNobody(t, "^(TestFind|TestFindCopy|TestFindBadID|TestAdopt|TestAdoptKilled)$")
}
