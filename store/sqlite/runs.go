package sqlite

import (
	"context"
	"errors"

	"github.com/flower-run/flower/store"
)

// TODO(onetruth): the run-state tables (schema 2). Until then only the
// entries of a batch are written.
var errNoRuns = errors.New("sqlite: run state not implemented yet")

func (d *DB) Commit(ctx context.Context, b store.Batch) error {
	if b.Archive != "" || b.Wake != "" || len(b.Bind) > 0 || b.Run != nil || len(b.Results) > 0 {
		return errNoRuns
	}
	return d.Append(ctx, b.Entries...)
}

func (d *DB) Run(ctx context.Context, id string) (store.Run, bool, error) {
	return store.Run{}, false, errNoRuns
}

func (d *DB) Runs(ctx context.Context, workspace string) ([]store.Run, error) {
	return nil, errNoRuns
}

func (d *DB) Lineage(ctx context.Context, workspace string) (store.Lineage, error) {
	return store.Lineage{}, errNoRuns
}

func (d *DB) Results(ctx context.Context, run string) ([]store.StepResult, error) {
	return nil, errNoRuns
}
