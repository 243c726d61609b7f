package flower

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/flower-run/flower/project"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow"
)

// A project that moves keeps its state (issue 22 item 3, package
// project): FindProject, before anything reads the run dir, binds the
// workspace's id and decides whose state it is; Open, under the lock,
// re-keys the store of a move being adopted.

// Adopter asks a person whether the project here, which was at from and
// left state there, takes that state over (y/N).
type Adopter func(from string) (bool, error)

// ErrNotAdopted is FindProject's error when the person said no.
var ErrNotAdopted = errors.New("the moved project's state was not adopted")

// FindProject finds whose state the project in ws (absolute) is, and
// returns the run dir its start uses: runDir, but for a moved project
// whose runDir is the one its new path names, the run dir holding its
// state. A project without an id gets one; a copy of a project whose
// original is still in place gets a new id, and state of its own, with a
// notice. A move with state behind is adopted once ask says yes, or with
// a notice when ask is nil (unattended): never does the new path start
// blank while the old state waits. A workspace where no id can be kept
// (read-only) goes on as before, found by its path, with a notice. url
// names the PostgreSQL store, if the state is there ("": SQLite in the
// run dir).
func FindProject(ws, runDir, url string, ask Adopter, notice io.Writer) (string, error) {
	home, err := StateHome()
	if err != nil {
		return runDir, nil // no index without a state directory: by path, as before
	}
	x, byPath := project.IndexIn(home), pathRunDir(home, ws)
	f, err := x.Find(ws, byPath)
	switch {
	case errors.Is(err, project.ErrBadID) || errors.Is(err, project.ErrHalfMoved):
		return "", usage("%v", err)
	case err != nil:
		noteTo(notice, "flower: note: %v: this project will not be found if it moves", err)
		return runDir, nil
	case f.Kind == project.None:
		if HasState(cmp.Or(runDir, byPath)) { // a project that had state before it had ids
			keepID(x, ws, byPath, notice)
		}
		return runDir, nil
	case f.Kind == project.Copied:
		noteTo(notice, "flower: note: this directory is a copy of %s, which is still there: it starts with state of its own (new project id %s)", Tilde(f.From), f.ID)
		return runDir, nil
	case f.Kind != project.Moved:
		return runDir, nil
	}
	if !f.Resumed {
		if err := beginAdoption(x, f, ws, url != "", ask, notice); err != nil {
			return "", err
		}
	}
	if runDir == "" || SameDir(runDir, byPath) {
		runDir = f.Entry.RunDir
	}
	return runDir, nil
}

// keepProjectID gives the workspace its project id once its first run is
// stored (workflow.Options.Stored, and Once's first usage): not earlier,
// so that a start that stores nothing writes nothing, and a kill before
// the task is durable leaves no trace of it.
func (h *Host) keepProjectID() {
	if home, err := StateHome(); err == nil && h.opts.DB == nil {
		keepID(project.IndexIn(home), h.ws, pathRunDir(home, h.ws), h.notice())
	}
}

// keepID gives ws an id bound to it and byPath unless it has one; where
// none can be kept (a read-only workspace), it says so and goes on.
func keepID(x project.Index, ws, byPath string, notice io.Writer) {
	if _, err := x.Keep(ws, byPath); err != nil {
		noteTo(notice, "flower: note: %v: this project will not be found if it moves", err)
	}
}

// beginAdoption asks (or tells) the person, then makes the intent to
// adopt the move durable (project.Index.Begin).
func beginAdoption(x project.Index, f project.Found, ws string, shared bool, ask Adopter, notice io.Writer) error {
	has := shared || HasState(f.Entry.RunDir) // a database may hold state: ask rather than look
	if has && ask != nil {
		ok, err := ask(f.From)
		if err != nil {
			return err
		}
		if !ok {
			return &UsageError{Err: fmt.Errorf("%w: its state stays with %s; run flower here again and answer y to adopt it, or delete %s to start this directory as a new project",
				ErrNotAdopted, Tilde(f.From), filepath.Join(ws, project.IDFile))}
		}
	}
	if err := x.Begin(f, ws); err != nil {
		return withStorageFix(err, x.Dir)
	}
	if has && ask == nil {
		noteTo(notice, "flower: note: this project moved here from %s: its state (%s) comes along", Tilde(f.From), Tilde(f.Entry.RunDir))
	}
	return nil
}

// adoptMove finishes the adoption of a move to ws that FindProject began,
// if there is one, in s, the store this process holds: it re-keys the
// records of the old path, moves the high-water mark, and binds the id
// to ws (project.Index.Adopt). A start after a crash in here does it
// again.
func adoptMove(ctx context.Context, s store.Store, runDir, ws string) error {
	home, err := StateHome()
	if err != nil {
		return nil
	}
	x := project.IndexIn(home)
	id, err := project.ReadID(ws)
	if err != nil || id == "" {
		return nil
	}
	e, ok, err := x.Get(id)
	if err != nil || !ok || e.To == "" || !SameDir(e.To, ws) {
		return err
	}
	m, ok := s.(store.Mover)
	if !ok {
		return fmt.Errorf("adopt the state of %s: the store cannot move a workspace's records", e.Workspace)
	}
	f := project.Found{Kind: project.Moved, ID: id, From: e.Workspace, Entry: e}
	err = x.Adopt(ctx, m, f, ws, func(from string) error { return workflow.MoveMark(runDir, from, ws) })
	if errors.Is(err, store.ErrMoveShared) {
		return &UsageError{Err: fmt.Errorf("%w; its state stays with %s: delete %s to start this directory as a new project",
			err, Tilde(e.Workspace), filepath.Join(ws, project.IDFile))}
	}
	return err
}
