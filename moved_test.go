package flower_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/project"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres/pgtest"
	"github.com/flower-run/flower/workflow"
)

// TestOpenAdoptsAMove: a Host opened in a renamed project adopts its
// state through Open (FindProject, then the re-key under the lease),
// with SQLite and with PostgreSQL, and says so; unattended it asks no
// one (issue 22 item 3).
func TestOpenAdoptsAMove(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			url := ""
			if backend == "postgres" {
				url = pgtest.URL(t)
			}
			state, parent := t.TempDir(), t.TempDir()
			t.Setenv("XDG_STATE_HOME", state)
			t.Setenv(flower.RunDirEnv, "")
			a, b := filepath.Join(parent, "a"), filepath.Join(parent, "b")
			if err := os.Mkdir(a, 0o755); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			h := open(t, a, url, nil)
			now := time.Now()
			run := store.Run{ID: "r1", Workspace: a, Status: store.RunInFlight, Step: "work", Created: now, Updated: now}
			if err := h.Store().Commit(ctx, store.Batch{Run: &run}); err != nil {
				t.Fatal(err)
			}
			if _, err := project.IndexIn(state).Keep(a, h.RunDir()); err != nil {
				t.Fatal(err)
			}
			runDir := h.RunDir()
			h.Close()
			if err := os.Rename(a, b); err != nil {
				t.Fatal(err)
			}
			var notes bytes.Buffer
			h = open(t, b, url, &notes)
			defer h.Close()
			if h.RunDir() != runDir {
				t.Errorf("the moved project's run dir = %s, want its state's %s", h.RunDir(), runDir)
			}
			if runs, err := h.Store().Runs(ctx, b); err != nil || len(runs) != 1 || runs[0].Workspace != b {
				t.Errorf("runs of the new path after Open: %+v, %v", runs, err)
			}
			if !strings.Contains(notes.String(), "moved here from "+a) || strings.Count(notes.String(), "\n") != 1 {
				t.Errorf("notes: %q, want one line saying the project moved here", notes.String())
			}
		})
	}
}

func open(t *testing.T, ws, url string, notice *bytes.Buffer) *flower.Host {
	t.Helper()
	o := flower.Options{Workspace: ws, StoreURL: url, Model: "demo"}
	if notice != nil {
		o.Notice = notice
	}
	h, err := flower.Open(context.Background(), o)
	if err != nil {
		t.Fatalf("Open(%s): %v", ws, err)
	}
	return h
}

// TestOpenRefusesAMoveThatSharesKeys: in a PostgreSQL store that also
// holds /…/a-b, whose keys /…/a_b shares (store.ProjectKey reads _ and -
// alike), a renamed a_b is not adopted: re-keying its records would take
// a-b's along. Open says why and what to do in one line, and neither
// workspace loses a run.
func TestOpenRefusesAMoveThatSharesKeys(t *testing.T) {
	url := pgtest.URL(t)
	state, parent := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv(flower.RunDirEnv, "")
	ab, lookalike, moved := filepath.Join(parent, "a_b"), filepath.Join(parent, "a-b"), filepath.Join(parent, "c")
	ctx := context.Background()
	for _, ws := range []string{ab, lookalike} {
		if err := os.Mkdir(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		h := open(t, ws, url, nil)
		now := time.Now()
		run := store.Run{ID: "r-" + filepath.Base(ws), Workspace: ws, Status: store.RunInFlight, Step: "work", Created: now, Updated: now}
		if err := h.Store().Commit(ctx, store.Batch{Run: &run}); err != nil {
			t.Fatal(err)
		}
		if _, err := project.IndexIn(state).Keep(ws, h.RunDir()); err != nil {
			t.Fatal(err)
		}
		h.Close()
	}
	if err := os.Rename(ab, moved); err != nil {
		t.Fatal(err)
	}
	_, err := flower.Open(ctx, flower.Options{Workspace: moved, StoreURL: url, Model: "demo", Notice: &bytes.Buffer{}})
	var usage *flower.UsageError
	if !errors.As(err, &usage) || !errors.Is(err, store.ErrMoveShared) || strings.Contains(err.Error(), "\n") ||
		!strings.Contains(err.Error(), lookalike) || !strings.Contains(err.Error(), filepath.Join(moved, project.IDFile)) {
		t.Fatalf("Open of the moved %s = %v, want one line naming %s and the id file to delete", ab, err, lookalike)
	}
	h := open(t, lookalike, url, nil)
	defer h.Close()
	for ws, id := range map[string]string{ab: "r-a_b", lookalike: "r-a-b"} {
		if runs, err := h.Store().Runs(ctx, ws); err != nil || len(runs) != 1 || runs[0].ID != id {
			t.Errorf("runs of %s after the refused move: %+v, %v; want %s", ws, runs, err, id)
		}
	}
}

// TestEveryRunKeepsTheProjectID: a project gets its id from its first
// stored run whichever way it ran: flower once (Host.Once) and a
// workflow of the embedder's own (Host.Run), as the starter flow does, so
// that it is found if its directory moves, its run dir named or not.
func TestEveryRunKeepsTheProjectID(t *testing.T) {
	for _, c := range []struct {
		name   string
		runDir bool
		run    func(h *flower.Host)
		want   bool
	}{
		{"once", false, func(h *flower.Host) { h.Once(context.Background(), "say hello", flower.OnceOptions{}) }, true},
		{"own workflow", false, func(h *flower.Host) {
			w := workflow.New(workflow.Step{Name: "hello", Prompt: "say hello", Spec: agent.Spec{Name: "hello"}})
			h.Run(context.Background(), w, workflow.Options{Task: "say hello"})
		}, true},
		{"once in a named run dir", true, func(h *flower.Host) { h.Once(context.Background(), "say hello", flower.OnceOptions{}) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			t.Setenv(flower.RunDirEnv, "")
			ws := t.TempDir()
			o := flower.Options{Workspace: ws, Model: "demo"}
			if c.runDir {
				o.RunDir = t.TempDir()
			}
			h, err := flower.Open(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if err := h.Start(context.Background(), flower.StartOptions{}); err != nil {
				t.Fatal(err)
			}
			c.run(h)
			id, err := project.ReadID(ws)
			if err != nil || (id != "") != c.want {
				t.Errorf("project id after the run: %q, %v; want one: %v", id, err, c.want)
			}
		})
	}
}
