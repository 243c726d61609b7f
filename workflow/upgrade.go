package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/flower-run/flower/store"
)

// v1StateFile is where flower before store schema 2 kept the run in
// flight; its presence marks a run dir whose JSON files are still the truth.
const v1StateFile = "state.json"

// v1State is state.json as flower before schema 2 wrote it.
type v1State struct {
	Run     string          `json:"run"`
	Status  string          `json:"status"` // running, done, failed, discarded
	Done    map[string]bool `json:"done"`
	Step    string          `json:"step"`
	Session string          `json:"session"`
	Round   int             `json:"round"`
	Judge   string          `json:"judge"`
	Prompt  string          `json:"prompt"`
}

// v1Row is a manifest.json row as flower before schema 2 wrote it.
type v1Row struct {
	Step      string    `json:"step"`
	SessionID string    `json:"session_id"`
	OK        bool      `json:"ok"`
	Cost      float64   `json:"cost"`
	Turns     int       `json:"turns"`
	Text      string    `json:"text"`
	Error     string    `json:"error"`
	Attempts  int       `json:"attempts"`
	Errors    []string  `json:"errors"`
	Resumed   bool      `json:"resumed"`
	Retired   []string  `json:"retired"`
	Context   int       `json:"context"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	DurationS float64   `json:"duration_s"`
	Run       string    `json:"run"`
}

// Upgrade imports a run dir written before the run state moved into the
// store: lineage.json, manifest.json and state.json become store records,
// in one commit (plus one per further wake counted), and state.json is
// renamed state.json.v1. It does nothing when there is no state.json. A
// crash midway leaves state.json in place and the next Upgrade completes
// the import: every record it writes replaces itself. note tells the
// person what was imported or ignored.
func Upgrade(ctx context.Context, s store.Store, runDir, ws string) (note string, err error) {
	statePath := filepath.Join(runDir, v1StateFile)
	data, err := os.ReadFile(statePath)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("upgrade %s: %w", statePath, err)
	}
	lineage, lerr := readIfAny(filepath.Join(runDir, LineageFile))
	manifest, merr := readIfAny(filepath.Join(runDir, ManifestFile))
	b, woke, notes := v1Batch(ws, data, lineage, manifest)
	for _, err := range []error{lerr, merr} {
		if err != nil {
			notes += "; ignored " + err.Error()
		}
	}
	if err := keepStored(ctx, s, ws, &b); err != nil {
		return "", fmt.Errorf("upgrade %s: %w", runDir, err)
	}
	if err := s.Commit(ctx, b); err != nil {
		return "", fmt.Errorf("upgrade %s: %w", runDir, err)
	}
	if err := addWakes(ctx, s, ws, woke); err != nil {
		return "", err
	}
	if err := os.Rename(statePath, statePath+".v1"); err != nil {
		return "", fmt.Errorf("upgrade %s: %w", statePath, err)
	}
	// The JSON files are the store's exports from now on, in the seed's
	// shape: a wake that runs nothing (a passed run) must not leave the
	// v1 manifest's field names behind. A failed export is a note: the
	// store holds the truth.
	for _, export := range []func() error{
		func() error { return ExportLineage(ctx, s, runDir, ws) },
		func() error { return ExportManifest(ctx, s, runDir, ws) },
	} {
		var corrupt *CorruptExportError
		if err := export(); err != nil && !errors.As(err, &corrupt) {
			notes += "; " + err.Error()
		}
	}
	return fmt.Sprintf("imported the run state of %s into the store%s", runDir, notes), nil
}

// v1Batch decodes the three v1 files into one batch; a nil lineage or
// manifest is a missing file. A corrupt file is skipped with a note, as v1
// itself ignored it: a manifest that fails to decode gives no rows, not
// the ones decoded before the error.
func v1Batch(ws string, stateData, lineageData, manifestData []byte) (b store.Batch, woke int, notes string) {
	var st v1State
	if err := json.Unmarshal(stateData, &st); err == nil && st.Run != "" {
		b.Run = v1Run(st, ws)
	} else {
		notes += "; ignored a corrupt state.json"
	}
	if lineageData != nil {
		if l, err := decodeLineage(lineageData); err != nil {
			notes += "; ignored a corrupt lineage.json"
		} else if l.Workspace == ws {
			woke = l.Woke
			for _, step := range sortedKeys(l.Steps) {
				b.Bind = append(b.Bind, store.Binding{Workspace: ws, Step: step, Session: l.Steps[step]})
			}
		}
	}
	var rows []v1Row
	if manifestData != nil {
		if err := json.Unmarshal(manifestData, &rows); err != nil {
			notes += "; ignored a corrupt manifest.json"
			rows = nil
		}
	}
	for _, r := range rows {
		b.Results = append(b.Results, store.StepResult{Run: r.Run, Step: r.Step, SessionID: r.SessionID, OK: r.OK,
			CostUSD: r.Cost, NumTurns: r.Turns, Text: r.Text, Error: r.Error, StartedAt: r.Start, EndedAt: r.End,
			Attempts: r.Attempts, Errors: r.Errors, Resumed: r.Resumed, Retired: r.Retired, Context: r.Context,
			DurationS: r.DurationS})
	}
	return b, woke, notes
}

// readIfAny reads a file; a missing (or unreadable) one is nil, an empty
// one is not.
func readIfAny(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case data == nil:
		return []byte{}, nil
	}
	return data, nil
}

func v1Run(st v1State, ws string) *store.Run {
	r := &store.Run{ID: st.Run, Workspace: ws, Status: store.RunInFlight, Step: st.Step, Row: st.Step,
		Session: st.Session, Round: st.Round, Judge: st.Judge, Prompt: st.Prompt}
	switch st.Status {
	case "done":
		r.Status, r.Outcome = store.RunFinished, "passed"
	case "failed":
		r.Status, r.Outcome = store.RunFinished, "failed"
	case "discarded":
		r.Status, r.Outcome = store.RunDiscarded, "discarded"
	}
	if st.Judge != "" {
		r.Step, r.Session = judgeStep, st.Judge
	}
	for _, step := range sortedKeys(st.Done) {
		if st.Done[step] {
			r.Done = append(r.Done, step)
		}
	}
	if t, err := time.Parse("20060102-150405", firstN(st.Run, 15)); err == nil {
		r.Created, r.Updated = t, t
	}
	return r
}

// keepStored drops from an import what the store already holds: a run it
// has, rows of steps it has, bindings of a thread it has. A second import
// (a crash came before state.json was renamed) then changes nothing, and a
// stray state.json in a run dir already upgraded never overwrites the
// store's records with the older files' (zero costs, a stale lineage).
func keepStored(ctx context.Context, s store.Store, ws string, b *store.Batch) error {
	if b.Run != nil {
		if _, ok, err := s.Run(ctx, b.Run.ID); err != nil {
			return err
		} else if ok {
			b.Run = nil
		}
	}
	have, err := s.Results(ctx, "")
	if err != nil {
		return err
	}
	stored := map[[2]string]bool{}
	for _, r := range have {
		stored[[2]string{r.Run, r.Step}] = true
	}
	kept := b.Results[:0]
	for _, r := range b.Results {
		if !stored[[2]string{r.Run, r.Step}] {
			kept = append(kept, r)
		}
	}
	b.Results = kept
	l, err := s.Lineage(ctx, ws)
	if err != nil {
		return err
	}
	if len(l.Steps) > 0 {
		b.Bind = nil
	}
	return nil
}

// addWakes raises the thread's wake count to woke.
func addWakes(ctx context.Context, s store.Store, ws string, woke int) error {
	l, err := s.Lineage(ctx, ws)
	if err != nil {
		return fmt.Errorf("upgrade: %w", err)
	}
	for n := l.Woke; n < woke; n++ {
		if err := s.Commit(ctx, store.Batch{Wake: ws}); err != nil {
			return fmt.Errorf("upgrade: %w", err)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func firstN(s string, n int) string {
	if len(s) < n {
		return s
	}
	return s[:n]
}
