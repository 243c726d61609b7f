package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flower-run/flower/internal/atomicfile"
)

// LineageFile is the name of the lineage in the run dir (R3.2).
const LineageFile = "lineage.json"

// Lineage maps step names to the sessions that hold their conversations, so
// the next process in this directory continues them (R3.2). It is rewritten
// atomically the moment a step's session id is known.
type Lineage struct {
	Workspace string            `json:"workspace"`
	Woke      int               `json:"woke"`
	Steps     map[string]string `json:"steps"`

	path string
}

// LoadLineage reads the lineage of runDir for workspace. A missing file, an
// unreadable or corrupt one, another workspace's, or one naming a session
// the store no longer has (has reports false) all give a fresh lineage:
// connection is an extra and never blocks work (R3.3). note says what was
// ignored, for the person; it is empty when nothing was.
func LoadLineage(runDir, workspace string, has func(session string) bool) (l *Lineage, note string) {
	path := filepath.Join(runDir, LineageFile)
	fresh := &Lineage{Workspace: workspace, Steps: map[string]string{}, path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return fresh, ""
	}
	if err != nil {
		return fresh, fmt.Sprintf("ignored %s (%v): starting fresh", path, err)
	}
	var got Lineage
	if err := json.Unmarshal(data, &got); err != nil {
		return fresh, fmt.Sprintf("ignored %s: not valid JSON (%v): starting fresh", path, err)
	}
	if got.Workspace != workspace {
		return fresh, fmt.Sprintf("ignored %s: it belongs to workspace %s: starting fresh", path, got.Workspace)
	}
	for step, id := range got.Steps {
		if has != nil && !has(id) {
			return fresh, fmt.Sprintf("ignored %s: step %s's session %s is not in the store: starting fresh", path, step, id)
		}
	}
	if got.Steps == nil {
		got.Steps = map[string]string{}
	}
	got.path = path
	return &got, ""
}

// Set records that step continues in session and saves at once.
func (l *Lineage) Set(step, session string) error {
	if l.Steps[step] == session {
		return nil
	}
	l.Steps[step] = session
	return l.Save()
}

// Save writes the lineage atomically (tmp, fsync, rename, fsync dir).
func (l *Lineage) Save() error {
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		return fmt.Errorf("save lineage: %w", err)
	}
	if err := atomicfile.WriteFile(l.path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("save lineage: %w", err)
	}
	return nil
}

// Archive moves the lineage file and the extra files into the directory
// into (created), then zeroes steps and woke: the next wake starts a new
// thread (R3.13). Missing files are skipped; the store is never touched.
func (l *Lineage) Archive(into string, extra ...string) error {
	if err := os.MkdirAll(into, 0o755); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	for _, p := range append([]string{l.path}, extra...) {
		err := os.Rename(p, filepath.Join(into, filepath.Base(p)))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("archive %s: %w", p, err)
		}
	}
	l.Steps, l.Woke = map[string]string{}, 0
	return atomicfile.SyncDir(into)
}
