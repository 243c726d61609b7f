package worker_test

import (
	"context"
	"errors"
	"strings"
	"testing"

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
