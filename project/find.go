package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flower-run/flower/store"
)

// Kind is what Find found at a start.
type Kind int

const (
	// None: the workspace has no id yet (Keep gives it one).
	None Kind = iota
	// Same: the index binds the workspace's id to it.
	Same
	// Moved: the index binds the id to another path, which no longer
	// holds this project; Adopt takes its state over.
	Moved
	// Copied: the other path still holds the same id: the workspace is a
	// copy, and was given a new id, so it starts with state of its own.
	Copied
	// Unbound: the index has no entry for the id (Look only: Find binds it).
	Unbound
)

// Found is what Find found at a start in a workspace.
type Found struct {
	Kind Kind
	ID   string
	// From is the other path (Moved, Copied); Entry the index entry to
	// adopt (Moved): its RunDir holds the state.
	From  string
	Entry Entry
	// Resumed: a Moved whose adoption began before a crash; the person
	// said yes then, so it is finished without asking again.
	Resumed bool
	// Made: the workspace had no id, and was given one (Keep).
	Made bool
}

// ErrHalfMoved is Find's error at a path a half-adopted move did not go to.
var ErrHalfMoved = errors.New("this project's move is half done")

// Find reads the id of the project at ws and says whose state is its. A
// copy gets a new id, bound to ws and defaultRunDir (the run dir named by
// ws's path), and an id the index lacks is bound here; those writes are
// all Find writes. A workspace without an id is None: Keep gives it one
// once it has state, so that nothing is written where nothing was
// started. A move is adopted by Begin and Adopt.
func (x Index) Find(ws, defaultRunDir string) (Found, error) {
	f, err := x.Look(ws)
	switch {
	case err != nil:
		return Found{}, err
	case f.Kind == Unbound: // state dir wiped, or another machine's project
		return Found{Kind: Same, ID: f.ID}, x.Put(f.ID, Entry{Workspace: ws, RunDir: defaultRunDir})
	case f.Kind == Copied:
		return x.fresh(ws, defaultRunDir, Found{Kind: Copied, From: f.From})
	}
	return f, nil
}

// Look is what Find finds at ws, but it writes nothing: a copy is
// Copied with the original's id, an id the index lacks is Unbound
// (flower doctor reports them).
func (x Index) Look(ws string) (Found, error) {
	id, err := ReadID(ws)
	if err != nil || id == "" {
		return Found{Kind: None}, err
	}
	e, ok, err := x.Get(id)
	switch {
	case err != nil:
		return Found{}, err
	case !ok:
		return Found{Kind: Unbound, ID: id}, nil
	case e.To != "" && SameDir(e.To, ws):
		return Found{Kind: Moved, ID: id, From: e.Workspace, Entry: e, Resumed: true}, nil
	case e.To != "":
		return Found{}, fmt.Errorf("%w: it was being moved from %s to %s; run flower in %s to finish the move", ErrHalfMoved, e.Workspace, e.To, e.To)
	case SameDir(e.Workspace, ws):
		return Found{Kind: Same, ID: id, Entry: e}, nil
	}
	if other, err := ReadID(e.Workspace); err == nil && other == id {
		return Found{Kind: Copied, ID: id, From: e.Workspace, Entry: e}, nil
	}
	return Found{Kind: Moved, ID: id, From: e.Workspace, Entry: e}, nil
}

// Keep gives workspace ws an id bound to it and defaultRunDir, unless it
// has one.
func (x Index) Keep(ws, defaultRunDir string) (Found, error) {
	if id, err := ReadID(ws); err != nil || id != "" {
		return Found{Kind: Same, ID: id}, err
	}
	return x.fresh(ws, defaultRunDir, Found{Kind: Same, Made: true})
}

// fresh gives ws a new id bound to it: the index entry first, so that a
// crash in between leaves an unused entry, never an id without one.
func (x Index) fresh(ws, runDir string, f Found) (Found, error) {
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return Found{}, fmt.Errorf("no workspace directory %s to keep the project id in", ws)
	}
	f.ID = newID()
	if err := x.Put(f.ID, Entry{Workspace: ws, RunDir: runDir}); err != nil {
		return Found{}, err
	}
	return f, writeID(ws, f.ID)
}

// Begin makes the intent to adopt the move f to ws durable: from then on
// the index resolves ws to the moved state (RunDir), and every later
// start in ws finishes the adoption.
func (x Index) Begin(f Found, ws string) error {
	e := f.Entry
	e.To = ws
	return x.Put(f.ID, e)
}

// Adopt finishes adopting the move f to ws, after Begin: s (the store
// that holds the project's state) re-keys the records of f.From to ws in
// one transaction, then (if not nil) moves whatever else names the old
// path, then the index binds ws. Each step is idempotent, so a start
// after a crash anywhere in here runs them all again.
func (x Index) Adopt(ctx context.Context, s store.Mover, f Found, ws string, then func(from string) error) error {
	if err := s.Move(ctx, f.From, ws); err != nil {
		return fmt.Errorf("adopt the state of %s: %w", f.From, err)
	}
	if then != nil {
		if err := then(f.From); err != nil {
			return fmt.Errorf("adopt the state of %s: %w", f.From, err)
		}
	}
	return x.Put(f.ID, Entry{Workspace: ws, RunDir: f.Entry.RunDir})
}

// SameDir reports whether a and b name the same directory.
func SameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b || filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}
