package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flower-run/flower/internal/atomicfile"
	"github.com/flower-run/flower/store"
)

// The run dir's JSON files are exports of the store, for people and
// scripts (DESIGN.md §3.7): written atomically after the commit they
// reflect, regenerated from the store on every write, never read back as
// truth. Their shapes are the seed's (seed 000).
const (
	LineageFile  = "lineage.json"
	ManifestFile = "manifest.json"
)

// LineageExport is lineage.json: {"workspace", "woke", "steps"}.
type LineageExport struct {
	Workspace string            `json:"workspace"`
	Woke      int               `json:"woke"`
	Steps     map[string]string `json:"steps"`
}

// Row is one manifest.json row: the seed's StepResult fields plus
// duration_s and run, on every row.
type Row = store.StepResult

// ExportLineage writes lineage.json from the store's lineage of ws.
func ExportLineage(ctx context.Context, s store.Store, runDir, ws string) error {
	l, err := s.Lineage(ctx, ws)
	if err != nil {
		return fmt.Errorf("export lineage: %w", err)
	}
	if err := writeLineage(runDir, ws, l); err != nil {
		return err
	}
	return writeMark(ctx, s, runDir, ws, nil, &l)
}

// writeLineage writes lineage.json of ws from l.
func writeLineage(runDir, ws string, l store.Lineage) error {
	return writeJSON(filepath.Join(runDir, LineageFile), LineageExport{Workspace: ws, Woke: l.Woke, Steps: l.Steps})
}

// workspaceResults is a store shared by many workspaces (PostgreSQL) that
// lists the step results of one workspace's runs.
type workspaceResults interface {
	WorkspaceResults(ctx context.Context, ws string) ([]store.StepResult, error)
}

// ExportManifest writes manifest.json from the step results of ws in the
// store: every result of a store of the run dir's own (SQLite), those of
// ws's runs in a store that many workspaces share (issue 19: 64 runs'
// manifests each rewritten with every run's rows, at every step).
func ExportManifest(ctx context.Context, s store.Store, runDir, ws string) error {
	rows, err := workspaceRows(ctx, s, ws)
	if err != nil {
		return fmt.Errorf("export manifest: %w", err)
	}
	for i := range rows {
		rows[i] = fullRow(rows[i])
	}
	if rows == nil {
		rows = []Row{}
	}
	if err := writeJSON(filepath.Join(runDir, ManifestFile), rows); err != nil {
		return err
	}
	return writeMark(ctx, s, runDir, ws, rows, nil)
}

// workspaceRows are the manifest rows of ws (see ExportManifest).
func workspaceRows(ctx context.Context, s store.Store, ws string) ([]Row, error) {
	if wr, ok := s.(workspaceResults); ok {
		return wr.WorkspaceResults(ctx, ws)
	}
	return s.Results(ctx, "")
}

// fullRow gives the list fields of a row [] rather than null: every field
// is present on every row, success or not.
func fullRow(r Row) Row {
	if r.Errors == nil {
		r.Errors = []string{}
	}
	if r.Retired == nil {
		r.Retired = []string{}
	}
	return r
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return nil // unchanged: no fsync, no rename
	}
	if err == nil && !json.Valid(old) {
		err = &CorruptExportError{Path: path}
	} else {
		err = nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("export %s: %w", filepath.Base(path), err)
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("export %s: %w", filepath.Base(path), err)
	}
	return err
}

// CorruptExportError reports an export that was not valid JSON: it was
// ignored and written again from the store.
type CorruptExportError struct{ Path string }

func (e *CorruptExportError) Error() string {
	return "ignored a corrupt " + e.Path + ": written again from the store"
}

// ReadManifest decodes a manifest.json export; a missing file has no rows.
func ReadManifest(path string) ([]Row, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := decodeManifest(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}

func decodeManifest(data []byte) ([]Row, error) {
	var rows []Row
	if err := json.Unmarshal(data, &rows); err != nil {
		return nil, fmt.Errorf("not a JSON array of rows: %w", err)
	}
	return rows, nil
}

// ReadLineage decodes a lineage.json export.
func ReadLineage(path string) (LineageExport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return LineageExport{}, err
	}
	l, err := decodeLineage(data)
	if err != nil {
		return l, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

func decodeLineage(data []byte) (LineageExport, error) {
	var l LineageExport
	if err := json.Unmarshal(data, &l); err != nil {
		return l, fmt.Errorf("not a lineage: %w", err)
	}
	return l, nil
}
