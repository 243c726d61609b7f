package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/store/postgres/pgtest"
	"github.com/flower-run/flower/worker"
)

// TestSubmitRefusesTheRoot: flower submit and POST /runs both queue
// through Submit, which refuses / before the store sees it (issue 20
// item 6): the store is nil here, and is not touched.
func TestSubmitRefusesTheRoot(t *testing.T) {
	_, err := worker.Submit(context.Background(), nil, "/", "write everywhere")
	if !errors.Is(err, worker.ErrInvalid) || !strings.Contains(err.Error(), "the filesystem root") {
		t.Errorf("Submit(/) = %v", err)
	}
}

// TestCheckSubmit: flower submit refuses with CheckSubmit before it opens
// the database; it refuses what Submit refuses (issue 19: one check, not
// a second copy in cmd/flower).
func TestCheckSubmit(t *testing.T) {
	ws := t.TempDir()
	if err := worker.CheckSubmit(ws, "write the report"); err != nil {
		t.Fatalf("a good submission: %v", err)
	}
	for _, c := range []struct{ ws, task, want string }{
		{ws, " \n", "needs a task"},
		{ws + "/gone", "x", "not a directory: workers need it"},
		{"/", "x", "the filesystem root"},
	} {
		err := worker.CheckSubmit(c.ws, c.task)
		if !errors.Is(err, worker.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckSubmit(%q, %q) = %v, want %q", c.ws, c.task, err, c.want)
		}
		if _, serr := worker.Submit(context.Background(), nil, c.ws, c.task); serr == nil || serr.Error() != err.Error() {
			t.Errorf("Submit(%q, %q) = %v, CheckSubmit %v", c.ws, c.task, serr, err)
		}
	}
}

// TestRunDirsOfLookalikeWorkspaces: one worker drives my_app and my-app
// side by side; each gets a run dir of its own (flower.RunDirName), whose
// manifest holds its own run. Named by store.ProjectKey they shared one
// (both -…-my-app), and the exports of one overwrote the other's.
func TestRunDirsOfLookalikeWorkspaces(t *testing.T) {
	url := pgtest.URL(t)
	fakeModel(t, 0)
	db := open(t, url)
	runs := submitIn(t, db, t.TempDir(), "my_app", "my-app")
	w := start(t, worker.Options{DB: open(t, url), Concurrency: 2})
	until(t, "both runs finish", finished(t, db, runs))
	w.stop()
	checkRuns(t, url, db, runs)
	for _, r := range runs {
		data, err := os.ReadFile(filepath.Join(w.dir, flower.RunDirName(r.Workspace), "manifest.json"))
		if err != nil {
			t.Fatalf("run %s in %s: %v", r.ID, r.Workspace, err)
		}
		var rows []struct{ Run string }
		if err := json.Unmarshal(data, &rows); err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if row.Run != r.ID {
				t.Errorf("the manifest of %s holds a row of run %s, not of its own run %s", r.Workspace, row.Run, r.ID)
			}
		}
	}
}
