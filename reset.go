package flower

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/workflow"
)

// ErrCancelled is a Reset its confirmation refused.
var ErrCancelled = errors.New("reset cancelled")

// ResetResult is what a Reset did.
type ResetResult struct {
	Moved     string   // where an incompatible sessions.db went ("" if none did)
	Discarded []string // the runs it abandoned
}

// Reset abandons the runs in flight of ws (R5.6) once confirm (nil:
// no question) says yes; a store of another schema version in runDir is
// moved aside first, so a new one can be created. Nothing is deleted: the
// sessions, the lineage and the manifest stay. notice receives a note on
// run state imported from an older flower.
//
// It holds the runs' lock throughout, confirmation included: a flower
// that started between a check and the discards could otherwise pick a
// run in flight and commit it back in flight after the reset discarded
// it. A live holder is refused with an error wrapping store.ErrBusy.
func Reset(ctx context.Context, runDir, url, ws string, confirm func() bool, notice io.Writer) (ResetResult, error) {
	if _, err := os.Stat(runDir); err == nil || hasStore(runDir, url) {
		unlock, err := LockRuns(ctx, runDir, url, ws)
		if errors.Is(err, store.ErrBusy) {
			return ResetResult{}, busyForReset(ctx, runDir, url, err)
		}
		if err != nil {
			return ResetResult{}, err
		}
		defer unlock()
	}
	if confirm != nil && !confirm() {
		return ResetResult{}, ErrCancelled
	}
	// The store as it is now is the truth from here: a damaged one is
	// accepted (issue 22 item 2).
	if err := os.Remove(filepath.Join(runDir, workflow.MarkFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ResetResult{}, fmt.Errorf("reset: %w", err)
	}
	var r ResetResult
	var err error
	if r.Moved, err = moveIncompatibleStore(runDir, time.Now()); err != nil {
		return r, err
	}
	if hasStore(runDir, url) { // again: the store moved aside holds nothing to discard
		r.Discarded, err = discardInFlight(ctx, runDir, url, ws, notice)
	}
	return r, err
}

// hasStore reports whether there may be run state to discard: a database
// store always may; the run dir's only once it holds a store.
func hasStore(runDir, url string) bool { return url != "" || HasState(runDir) }

// busyForReset words a refused reset: the run dir's holder, or the
// lease's refusal as it is (it names the holder).
func busyForReset(ctx context.Context, runDir, url string, err error) error {
	if url != "" {
		return fmt.Errorf("%w: stop it before --reset", err)
	}
	h, _ := sqlite.Dirs{}.Holder(ctx, runDir)
	return &busyError{fmt.Sprintf("pid %d is driving %s: stop it before --reset", h.PID, runDir), err}
}

// busyError is a refusal worded for a person that still unwraps to the
// lease's error (store.ErrBusy).
type busyError struct {
	msg string
	err error
}

func (e *busyError) Error() string { return e.msg }
func (e *busyError) Unwrap() error { return e.err }
