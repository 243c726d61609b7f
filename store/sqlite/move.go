package sqlite

import (
	"context"
	"database/sql"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/internal/rows"
)

var _ store.Mover = (*DB)(nil)

// Move re-keys workspace from's records to to in one write transaction
// (store.Mover): a crash leaves them all under one path or the other.
func (d *DB) Move(ctx context.Context, from, to string) error {
	return d.write(ctx, "move "+from, func(tx *sql.Tx) error {
		return rows.Move(ctx, sqlTx{tx}, from, to)
	})
}

// sqlTx is a *sql.Tx as rows.Move uses it.
type sqlTx struct{ tx *sql.Tx }

func (t sqlTx) Exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.ExecContext(ctx, q, args...)
	return err
}

func (t sqlTx) Query(ctx context.Context, q string, scan func(rows.Rows) error, args ...any) error {
	rs, err := t.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	_, err = rows.Collect(rs, "query", func(r rows.Rows) (struct{}, error) { return struct{}{}, scan(r) })
	return err
}
