package workflow

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/internal/atomicfile"
)

// ManifestFile is the name of the manifest in the run dir (R3.4).
const ManifestFile = "manifest.json"

// Row is one step attempt: every result field plus its duration and run.
// Step names take the forms name, name#retry<N>, name#round<N> and
// name·judge#<N>.
type Row struct {
	Step string `json:"step"`
	agent.Result
	DurationS float64 `json:"duration_s"`
	Run       string  `json:"run"`
}

// Manifest accumulates rows across processes. Each write re-reads the file
// under an exclusive lock, replaces this run's rows with their latest state,
// keeps every other run's, and replaces the file atomically: several flower
// processes in one directory never lose each other's rows.
type Manifest struct {
	path, run string
	mu        sync.Mutex // guards rows
	rows      []Row      // this run's rows, in order
}

// NewManifest is the manifest of runDir as written by run. It starts from
// the rows run already has in the file: a process that finishes a run a
// crash cut keeps the rows of the steps the dead process completed.
func NewManifest(runDir, run string) *Manifest {
	m := &Manifest{path: filepath.Join(runDir, ManifestFile), run: run}
	rows, _ := ReadManifest(m.path)
	for _, r := range rows {
		if r.Run == run {
			m.rows = append(m.rows, r)
		}
	}
	return m
}

// Record sets the latest state of a step's row (by step name) and saves.
func (m *Manifest) Record(step string, res agent.Result) error {
	row := Row{Step: step, Result: res, Run: m.run,
		DurationS: res.End.Sub(res.Start).Seconds()}
	m.mu.Lock()
	defer m.mu.Unlock()
	replaced := false
	for i := range m.rows {
		if m.rows[i].Step == step {
			m.rows[i], replaced = row, true
		}
	}
	if !replaced {
		m.rows = append(m.rows, row)
	}
	return m.save()
}

func (m *Manifest) save() error {
	if err := os.MkdirAll(filepath.Dir(m.path), 0o755); err != nil {
		return fmt.Errorf("save manifest: %w", err)
	}
	unlock, err := lockFile(m.path + ".lock")
	if err != nil {
		return fmt.Errorf("lock manifest: %w", err)
	}
	defer unlock()
	rows, _ := ReadManifest(m.path) // a corrupt file loses only what it already lost
	kept := rows[:0]
	for _, r := range rows {
		if r.Run != m.run {
			kept = append(kept, r)
		}
	}
	data, err := json.MarshalIndent(append(kept, m.rows...), "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(m.path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("save manifest: %w", err)
	}
	return nil
}

// ReadManifest returns the rows of a manifest file; a missing file has none.
func ReadManifest(path string) ([]Row, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rows []Row
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("%s: not a JSON array of rows: %w", path, err)
	}
	return rows, nil
}

// lockFile takes an exclusive advisory lock, waiting for other processes.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
