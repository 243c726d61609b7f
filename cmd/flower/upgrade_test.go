package main

// Upgrade from the previous flower, with real processes (issue 9): the run
// dirs under testdata/ were written by the v1 flower with the offline demo
// model; the flower of this tree imports them on its first wake.

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow"
)

// demo runs flower on the offline demo model, unattended: the model that
// made the fixtures.
var demo = []string{"--model", "demo", "--timeout", "0"}

// seedFields are the keys of every manifest.json row (R3.4).
var seedFields = []string{"attempts", "context", "cost_usd", "duration_s", "ended_at", "error", "errors", "num_turns",
	"ok", "resumed", "retired", "run", "session_id", "started_at", "step", "text"}

// v1Workspace copies a v1 fixture to ws, the absolute path the v1 flower
// ran in: session keys embed it, so no other path will do. ws must not
// exist; it is removed when the test ends.
func v1Workspace(t *testing.T, fixture, ws string) {
	t.Helper()
	if err := os.Mkdir(ws, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			t.Fatalf("%s already exists: the v1 fixture %s must be copied to exactly that path (its session keys name it). "+
				"Another test run may be using it; otherwise remove it and run again", ws, fixture)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	if err := os.CopyFS(ws, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
}

// v1Rows are the rows of a v1 manifest.json, under the v1 field names.
type v1Row struct {
	Step      string  `json:"step"`
	SessionID string  `json:"session_id"`
	OK        bool    `json:"ok"`
	Turns     int     `json:"turns"`
	Text      string  `json:"text"`
	Run       string  `json:"run"`
	DurationS float64 `json:"duration_s"`
}

func readV1(t *testing.T, runDir string) (state struct{ Run, Status string }, rows []v1Row, woke int) {
	t.Helper()
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(runDir, "state.json"))), &state); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(runDir, "manifest.json"))), &rows); err != nil {
		t.Fatal(err)
	}
	return state, rows, readLineage(t, filepath.Dir(runDir)).Woke
}

// checkSeedRows checks that every row of manifest.json has the seed's
// field names, and that rows begins with the v1 rows, imported.
func checkSeedRows(t *testing.T, runDir string, v1 []v1Row) []workflow.Row {
	t.Helper()
	var raw []map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(runDir, workflow.ManifestFile))), &raw); err != nil {
		t.Fatal(err)
	}
	for i, r := range raw {
		keys := make([]string, 0, len(r))
		for k := range r {
			keys = append(keys, k)
		}
		if slices.Sort(keys); !slices.Equal(keys, seedFields) {
			t.Errorf("manifest row %d has the fields %v, want the seed's %v", i, keys, seedFields)
		}
	}
	rows := readManifest(t, runDir)
	if len(rows) < len(v1) {
		t.Fatalf("manifest.json has %d rows, fewer than the v1 manifest's %d", len(rows), len(v1))
	}
	for i, want := range v1 {
		got := rows[i]
		if got.Step != want.Step || got.SessionID != want.SessionID || got.OK != want.OK || got.NumTurns != want.Turns ||
			got.Text != want.Text || got.Run != want.Run || got.DurationS != want.DurationS || got.StartedAt.IsZero() {
			t.Errorf("row %d: %+v, want the v1 row %+v", i, got, want)
		}
	}
	return rows
}

// TestUpgradeFinishesTheCutV1Run wakes a whole v1 workspace cut by kill -9
// in its work step: the wake imports it and finishes that very run.
func TestUpgradeFinishesTheCutV1Run(t *testing.T) {
	t.Parallel()
	const ws = "/tmp/flower-v1-cut"
	v1Workspace(t, filepath.Join("testdata", "v1-cut"), ws)
	runDir := filepath.Join(ws, "runs")
	state, v1, woke := readV1(t, runDir)
	if state.Status != "running" {
		t.Fatalf("the fixture's run is %s, want a cut (running) one", state.Status)
	}

	r := runFlower(t, ws, nil, demo...)
	if r.code != 0 {
		t.Fatalf("the first wake: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"note: imported the run state", "finishing run " + state.Run, "✓ verdict passed · run " + state.Run} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the first wake's output lacks %q:\n%s", want, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(runDir, "state.json.v1")); err != nil {
		t.Errorf("state.json.v1: %v", err)
	}
	if _, err := os.Stat(filepath.Join(runDir, "state.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state.json is still there: %v", err)
	}
	runs := runsOf(t, runDir)
	if len(runs) != 1 || runs[0].ID != state.Run || runs[0].Status != store.RunFinished || runs[0].Outcome != "passed" {
		t.Fatalf("runs after the wake: %+v, want only %s, passed", runs, state.Run)
	}
	rows := checkSeedRows(t, runDir, v1)
	if got := rowNames(rows[len(v1):]); !slices.Equal(got, []string{"work", "work·judge#1"}) {
		t.Errorf("the wake's rows: %v, want work and its judge", got)
	}
	for _, row := range rows {
		if row.Run != state.Run {
			t.Errorf("row %s of run %s: the wake ran another run than the cut one", row.Step, row.Run)
		}
	}
	if !rows[len(v1)].Resumed {
		t.Errorf("the work row %+v is not marked resumed: the cut step started over", rows[len(v1)])
	}
	if st, ok := psLine(ps(t, ws, "--all"), state.Run); !ok || st != "passed" {
		t.Errorf("flower ps --all shows %s as %q, want passed", state.Run, st)
	}
	if l := readLineage(t, ws); l.Woke != woke+1 {
		t.Errorf("woke %d, want the v1 count %d plus this wake", l.Woke, woke)
	}
}

// TestUpgradeOfAFinishedV1Run imports a v1 run dir whose run passed: there
// is nothing to continue, and the thread keeps its wake count.
func TestUpgradeOfAFinishedV1Run(t *testing.T) {
	t.Parallel()
	fixture := filepath.Join("testdata", "v1-rundir")
	ws := strings.TrimSpace(readFile(t, filepath.Join(fixture, "WORKSPACE")))
	v1Workspace(t, fixture, ws)
	// The fixture is the run dir alone; the v1 run that passed had also
	// left its brief and goals in the workspace, as the cut fixture shows.
	runDir := filepath.Join(ws, "runs")
	if err := os.Mkdir(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"state.json", "lineage.json", "manifest.json", "sessions.db"} {
		if err := os.Rename(filepath.Join(ws, name), filepath.Join(runDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(filepath.Join(ws, ".flower"), os.DirFS(filepath.Join("testdata", "v1-cut", ".flower"))); err != nil {
		t.Fatal(err)
	}
	state, v1, woke := readV1(t, runDir)

	// Read-only commands leave an older flower's run dir as it is.
	before := snapshot(t, ws)
	for _, a := range [][]string{{"ps", "--all"}, {"status"}} {
		if r := runFlower(t, ws, nil, a...); r.code != 0 || !strings.Contains(r.stdout, "older flower") {
			t.Errorf("flower %v before the import: exit %d\n%s%s", a, r.code, r.stdout, r.stderr)
		}
	}
	assertSameFiles(t, before, snapshot(t, ws))

	r := runFlower(t, ws, nil, demo...)
	if r.code != 0 || !strings.Contains(r.stdout, "note: imported the run state") ||
		!strings.Contains(r.stdout, "✓ run "+state.Run+" passed its verdict: nothing to continue") {
		t.Fatalf("the first wake: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(runDir, "state.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("state.json is still there: %v", err)
	}
	if st, ok := psLine(ps(t, ws, "--all"), state.Run); !ok || st != "passed" {
		t.Errorf("flower ps --all shows %s as %q, want passed", state.Run, st)
	}
	// The v1 wakes, and this one, which ran nothing but was a wake.
	woke++
	if s := runFlower(t, ws, nil, "status"); s.code != 0 || !strings.Contains(s.stdout, "wakes      "+strconv.Itoa(woke)+"\n") {
		t.Errorf("flower status after the import, want wakes %d:\n%s%s", woke, s.stdout, s.stderr)
	}
	// The exports are the store's now, in the seed's shape.
	if rows := checkSeedRows(t, runDir, v1); len(rows) != len(v1) {
		t.Errorf("manifest.json has %d rows, want the %d imported", len(rows), len(v1))
	}
	if l := readLineage(t, ws); l.Woke != woke || l.Workspace != ws {
		t.Errorf("lineage.json after the import: %+v, want woke %d", l, woke)
	}
}
