package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/internal/rows"
)

var _ store.Mover = (*DB)(nil)

// Move re-keys workspace from's records to to in one transaction
// (store.Mover). It refuses while a process holds from's lease: that
// process may still be writing under the old path.
func (d *DB) Move(ctx context.Context, from, to string) error {
	return d.move(ctx, from, to, nil)
}

// Move is the leaseholder's move: fenced, as every write of its store.
func (s *leased) Move(ctx context.Context, from, to string) error {
	return s.l.lostErr(s.move(ctx, from, to, s.l))
}

func (d *DB) move(ctx context.Context, from, to string, l *Lease) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("move %s: %w", from, err)
	}
	defer tx.Rollback(ctx) // a no-op after Commit
	if l != nil {
		if _, err := tx.Exec(ctx, fenceSQL, l.fence()...); err != nil {
			return fmt.Errorf("move %s: %w", from, err)
		}
	}
	// The old path's lock, for this transaction: refused while a live
	// process leases from.
	var free bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(`+lockKey+`)`, from).Scan(&free); err != nil {
		return fmt.Errorf("move %s: %w", from, err)
	}
	if !free {
		return fmt.Errorf("move %s: %w: a process leases it (flower ps shows it)", from, store.ErrBusy)
	}
	if err := rows.Move(ctx, pgTx{tx}, from, to); err != nil {
		return fmt.Errorf("move %s: %w", from, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("move %s: commit: %w", from, err)
	}
	return nil
}

// pgTx is a pgx.Tx as rows.Move uses it.
type pgTx struct{ tx pgx.Tx }

func (t pgTx) Exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.Exec(ctx, q, args...)
	return err
}

func (t pgTx) Query(ctx context.Context, q string, scan func(rows.Rows) error, args ...any) error {
	rs, err := t.tx.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	_, err = rows.Collect(rs, "query", func(r rows.Rows) (struct{}, error) { return struct{}{}, scan(r) })
	return err
}
