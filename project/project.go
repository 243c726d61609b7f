// Package project finds a project's state after the project moves (issue
// 22 item 3). The state of a workspace lives outside it, in a run dir
// named by its path, and its store's records name the path too; a rename
// of the project's directory would otherwise start it blank and redo
// finished work.
//
// A project carries an id in its workbench (.flower/project), made once
// it has state: after its first run is stored, or at the first start of
// a project that had state before it had ids. The index, a directory of small files under flower's state
// directory, maps each id to the path it was last used at and the run dir
// that holds its state:
//
//	<state>/flower/ids/<id>.json   {"workspace": "/p/old", "run_dir": "...", "to": "/p/new"}
//
// A start at a path whose id the index binds to another path finds the
// project moved (the old path is gone, or holds another id) or copied
// (the old path still holds the same id: the copy gets a new id and state
// of its own). Adopting a move is three durable writes, each idempotent,
// so a kill at any point leaves the old binding or the new one and the
// next start finishes the move: the index entry names the new path in
// "to" (the intent), the store re-keys the records in one transaction
// (store.Mover), the entry binds the new path.
package project

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flower-run/flower/internal/atomicfile"
)

// IDFile is the project's id, in the workbench directory of the workspace.
const IDFile = ".flower/project"

// ErrBadID is ReadID's error for an id file that holds no id.
var ErrBadID = errors.New("not a project id")

// ReadID is the id of the project in workspace ws; "" when it has none.
func ReadID(ws string) (string, error) {
	data, err := os.ReadFile(filepath.Join(ws, IDFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the project id: %w", err)
	}
	id := strings.TrimSpace(string(data))
	if !validID(id) {
		return "", fmt.Errorf("%s holds %q, %w: delete it and flower makes a new one (this project then starts with new state)", filepath.Join(ws, IDFile), firstLine(id), ErrBadID)
	}
	return id, nil
}

// writeID gives workspace ws the id, atomically.
func writeID(ws, id string) error {
	path := filepath.Join(ws, IDFile)
	// Mkdir, not MkdirAll: a workspace that is missing is never created
	// behind the person's back.
	if err := os.Mkdir(filepath.Dir(path), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("write the project id: %w", err)
	} else if err == nil {
		if err := atomicfile.SyncDir(ws); err != nil {
			return fmt.Errorf("write the project id: %w", err)
		}
	}
	if err := atomicfile.WriteFile(path, []byte(id+"\n"), 0o644); err != nil {
		return fmt.Errorf("write the project id %s: %w", path, err)
	}
	return nil
}

// newID is a random id: 16 hex digits.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

func validID(id string) bool {
	if len(id) < 8 || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r == '-') {
			return false
		}
	}
	return true
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// mkdirSynced makes dir if it is missing, and makes its entry durable.
func mkdirSynced(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(dir))
}

// Entry is an index file: where a project's state is, and the path a
// move is being adopted to ("" when none is).
type Entry struct {
	Workspace string `json:"workspace"`
	RunDir    string `json:"run_dir"`
	To        string `json:"to,omitempty"`
}

// Index is the directory of index files.
type Index struct{ Dir string }

// IndexIn is the index of the state directory home ($XDG_STATE_HOME).
func IndexIn(home string) Index { return Index{Dir: filepath.Join(home, "flower", "ids")} }

func (x Index) path(id string) string { return filepath.Join(x.Dir, id+".json") }

// Get is the entry of id; ok is false when the index has none (or one
// that does not parse, which the next Put replaces).
func (x Index) Get(id string) (e Entry, ok bool, err error) {
	data, err := os.ReadFile(x.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, fmt.Errorf("read the project index: %w", err)
	}
	if json.Unmarshal(data, &e) != nil || e.Workspace == "" {
		return Entry{}, false, nil
	}
	return e, true, nil
}

// Put replaces the entry of id, atomically and durably.
func (x Index) Put(id string, e Entry) error {
	if err := mkdirSynced(x.Dir); err != nil {
		return fmt.Errorf("write the project index: %w", err)
	}
	data, _ := json.MarshalIndent(e, "", "  ") // an Entry always encodes
	if err := atomicfile.WriteFile(x.path(id), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write the project index: %w", err)
	}
	return nil
}

// RunDir is where the state of workspace ws lives by its id: the run dir
// its index entry names, when the entry binds ws, or is adopting a move
// to ws; ok is false otherwise (no id, no entry, or an entry of another
// path), and the caller uses the run dir named by the path. It reads and
// writes nothing else: read-only commands use it.
func (x Index) RunDir(ws string) (dir string, ok bool) {
	id, err := ReadID(ws)
	if err != nil || id == "" {
		return "", false
	}
	e, ok, err := x.Get(id)
	if err != nil || !ok || !(SameDir(e.Workspace, ws) && e.To == "" || SameDir(e.To, ws)) {
		return "", false
	}
	return e.RunDir, true
}
