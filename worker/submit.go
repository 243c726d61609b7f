package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow/starter"
)

// ErrInvalid is wrapped by the errors of a submission that can only be
// fixed by submitting differently (no task, no workspace here).
var ErrInvalid = errors.New("invalid submission")

type invalid string

func (e invalid) Error() string        { return string(e) }
func (e invalid) Is(target error) bool { return target == ErrInvalid }

// A SubmitOption shapes a submitted run.
type SubmitOption func(*store.Run)

// AskTimeout sets how long the run's questions wait for an answer through
// flower serve --runs (0: the run is unattended). Without it they wait as
// long as the worker that drives the run says (Options.AskTimeout).
func AskTimeout(d time.Duration) SubmitOption {
	return func(r *store.Run) {
		s := max(d, 0).Seconds()
		r.AskTimeout = &s
	}
}

// Submit queues a run of task in ws, an absolute path every worker sees
// (a shared filesystem): a run in flight that no process drives yet, for
// the next worker to claim. On a workspace whose brief is confirmed, task
// is an addition to the thread's task, as flower "..." there (R3.9).
func Submit(ctx context.Context, s store.Store, ws, task string, opts ...SubmitOption) (store.Run, error) {
	task = strings.TrimSpace(task)
	if err := CheckSubmit(ws, task); err != nil {
		return store.Run{}, err
	}
	now := time.Now()
	r := store.Run{ID: RunID(now), Workspace: ws, Status: store.RunInFlight, Created: now, Updated: now}
	for _, o := range opts {
		o(&r)
	}
	if starter.WakeState(ws, s).Waking {
		r.Phrase = task
	} else {
		r.Task = task
	}
	if err := s.Commit(ctx, store.Batch{Run: &r}); err != nil {
		return store.Run{}, fmt.Errorf("submit: %w", err)
	}
	return r, nil
}

// Submitter is Submit on db in the shape of web.Runs' Submit (POST
// /runs, flower submit): askTimeout nil leaves the run's questions to the
// worker's AskTimeout, and an invalid submission is the request's fault
// (web.Invalid, wrapping ErrInvalid).
func Submitter(db store.Store) func(ctx context.Context, ws, task string, askTimeout *float64) (store.Run, error) {
	return func(ctx context.Context, ws, task string, askTimeout *float64) (store.Run, error) {
		var opts []SubmitOption
		if askTimeout != nil {
			opts = append(opts, AskTimeout(time.Duration(*askTimeout*float64(time.Second))))
		}
		r, err := Submit(ctx, db, ws, task, opts...)
		if errors.Is(err, ErrInvalid) {
			return r, web.Invalid(err)
		}
		return r, err
	}
}

// CheckSubmit refuses what Submit would refuse of ws and task, with an
// error wrapping ErrInvalid, before any database is touched.
func CheckSubmit(ws, task string) error {
	if strings.TrimSpace(task) == "" {
		return invalid(`submit needs a task, e.g. flower submit "fix the flaky test"`)
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return invalid(fmt.Sprintf("workspace %s: not a directory: workers need it at this path on a shared filesystem", ws))
	}
	if err := flower.CheckWorkspace(ws); err != nil {
		return invalid(err.Error())
	}
	return nil
}

// RunID is a run id as the engine makes them: time, then 6 hex digits.
func RunID(now time.Time) string {
	b := make([]byte, 3)
	rand.Read(b)
	return now.Format("20060102-150405") + "-" + hex.EncodeToString(b)
}
