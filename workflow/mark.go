package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flower-run/flower/store"
)

// MarkFile is the run dir's high-water mark (issue 22 item 2): how much of
// a workspace's state the store held at its last export. The store only
// grows (DESIGN.md §3.2), so a store that holds less than its mark lost
// committed records: a damaged WAL, a file restored from an older copy.
// It lives beside the store, not in it, so the damage that drops the
// records cannot drop the mark too.
const MarkFile = "highwater.json"

// Mark is what MarkFile records. Each part only grows, but the wake count
// and the lineage's sessions, which start again with each thread: they
// are compared only within one thread.
type Mark struct {
	Workspace string           `json:"workspace"`
	Runs      []string         `json:"runs"`     // every run's id, oldest first
	Results   int              `json:"results"`  // the workspace's manifest rows
	Thread    int              `json:"thread"`   // the thread: an archive (--new) starts the next
	Woke      int              `json:"woke"`     // the thread's wakes
	Sessions  map[string]int64 `json:"sessions"` // the lineage's sessions: their newest entry's seq
}

// ReadMark reads the store's state of ws now, as a mark.
func ReadMark(ctx context.Context, s store.Store, ws string) (Mark, error) {
	rows, err := workspaceRows(ctx, s, ws)
	if err != nil {
		return Mark{}, err
	}
	l, err := s.Lineage(ctx, ws)
	if err != nil {
		return Mark{}, err
	}
	return markOf(ctx, s, ws, len(rows), l)
}

// markOf completes a mark of ws from the manifest rows and the lineage an
// export has just read: an export reads each of them once.
func markOf(ctx context.Context, s store.Store, ws string, results int, l store.Lineage) (Mark, error) {
	m := Mark{Workspace: ws, Results: results, Thread: l.Thread, Woke: l.Woke, Sessions: map[string]int64{}}
	runs, err := s.Runs(ctx, ws)
	if err != nil {
		return m, err
	}
	for _, r := range runs {
		m.Runs = append(m.Runs, r.ID)
	}
	for _, id := range l.Steps {
		seq, err := store.ReadLastSeq(ctx, s, store.SessionKey(ws, id))
		if err != nil {
			return m, err
		}
		m.Sessions[id] = seq
	}
	return m, nil
}

// WriteMark records the store's state of ws now in the run dir's mark, as
// an export does.
func WriteMark(ctx context.Context, s store.Store, runDir, ws string) error {
	return writeMark(ctx, s, runDir, ws, nil, nil)
}

// writeMark records the store's state of ws in the run dir's mark, given
// the manifest rows and the lineage the caller read (nil: read them). A
// store many workspaces share writes none (see marked).
func writeMark(ctx context.Context, s store.Store, runDir, ws string, rows []Row, l *store.Lineage) error {
	if !marked(s) {
		return nil
	}
	var err error
	if rows == nil {
		if rows, err = workspaceRows(ctx, s, ws); err != nil {
			return fmt.Errorf("high-water mark: %w", err)
		}
	}
	if l == nil {
		read, err := s.Lineage(ctx, ws)
		if err != nil {
			return fmt.Errorf("high-water mark: %w", err)
		}
		l = &read
	}
	m, err := markOf(ctx, s, ws, len(rows), *l)
	if err != nil {
		return fmt.Errorf("high-water mark: %w", err)
	}
	return writeJSON(filepath.Join(runDir, MarkFile), m)
}

// marked says whether s is a store a mark guards: one of the run dir's
// own (SQLite), which a damaged file can shrink. A store many workspaces
// share (PostgreSQL) is kept whole by its server, and a run dir there is
// one machine's, which may lag the others': CheckMark checks none there,
// and writing one at every export cost a worker ~17 statements and 8
// fsynced files per run for nothing (issue 19).
func marked(s store.Store) bool {
	_, shared := s.(workspaceResults)
	return !shared
}

// DamageError is a store that holds less than its high-water mark.
type DamageError struct {
	Path    string   // the mark
	Missing []string // what the store lost, for people
}

func (e *DamageError) Error() string {
	return "the store lost records it had committed (" + strings.Join(e.Missing, "; ") + ", per " + e.Path +
		"): it is damaged, and going on would redo finished work. Restore sessions.db (with its -wal) from a backup, " +
		"or start this workspace over with flower --reset"
}

// CheckMark compares the store's state of ws with the run dir's mark: a
// *DamageError names what the store lost. No mark (a first start, an
// older flower), one of another workspace, or a store no mark guards
// (marked) checks nothing.
func CheckMark(ctx context.Context, s store.Store, runDir, ws string) error {
	if !marked(s) {
		return nil
	}
	path := filepath.Join(runDir, MarkFile)
	was, ok, err := readMarkFile(path, ws)
	if err != nil || !ok {
		return err
	}
	now, err := ReadMark(ctx, s, ws)
	if err != nil {
		return fmt.Errorf("high-water mark: %w", err)
	}
	if missing := lost(was, now); len(missing) > 0 {
		return &DamageError{Path: path, Missing: missing}
	}
	return nil
}

// lost says what mark was holds that now lacks.
func lost(was, now Mark) []string {
	var out []string
	for _, id := range was.Runs {
		if !slices.Contains(now.Runs, id) {
			out = append(out, "run "+id)
		}
	}
	if now.Results < was.Results {
		out = append(out, fmt.Sprintf("%d of %d manifest rows", was.Results-now.Results, was.Results))
	}
	if now.Thread < was.Thread {
		out = append(out, fmt.Sprintf("thread %d (it had %d)", now.Thread, was.Thread))
	}
	if now.Thread != was.Thread {
		return out // a new thread: its wakes and sessions start again
	}
	if now.Woke < was.Woke {
		out = append(out, fmt.Sprintf("wake count %d, was %d", now.Woke, was.Woke))
	}
	var sessions []string
	for id, seq := range was.Sessions {
		if now.Sessions[id] < seq {
			sessions = append(sessions, fmt.Sprintf("session %s's entries after seq %d (it had up to %d)", id, now.Sessions[id], seq))
		}
	}
	slices.Sort(sessions) // map order: a stable text
	return append(out, sessions...)
}

// MoveMark makes the run dir's mark, if it is of workspace from, the
// mark of to: the workspace moved, and its store's records with it
// (store.Mover), so the mark still says how much the store held.
func MoveMark(runDir, from, to string) error {
	path := filepath.Join(runDir, MarkFile)
	m, ok, err := readMarkFile(path, from)
	if err != nil || !ok {
		return err
	}
	m.Workspace = to
	return writeJSON(path, m)
}

// readMarkFile reads the mark at path; ok is false when there is none, or it
// is torn (by hand) or another workspace's than ws: the next export
// writes it again.
func readMarkFile(path, ws string) (m Mark, ok bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, fmt.Errorf("high-water mark: %w", err)
	}
	if json.Unmarshal(data, &m) != nil || m.Workspace != ws {
		return m, false, nil
	}
	return m, true, nil
}
