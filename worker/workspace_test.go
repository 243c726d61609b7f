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
