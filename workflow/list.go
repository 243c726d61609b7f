package workflow

import (
	"context"
	"fmt"
	"time"

	"github.com/flower-run/flower/store"
)

// RunInfo is a run as flower ps shows it.
type RunInfo struct {
	store.Run
	Owner store.Holder // who drives it now, if Live
	Live  bool         // a process drives it now
}

// List returns the runs of a workspace ("": of every workspace): the ones
// in flight, or all of them, oldest first. A run in flight is live when
// holder, the lease of its workspace, is held by the process the run
// names. It reads only: the store, and the leases without taking them.
func List(ctx context.Context, s store.Store, holder func(ctx context.Context, ws string) (store.Holder, error), ws string, all bool) ([]RunInfo, error) {
	runs, err := s.Runs(ctx, ws)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	holders := map[string]store.Holder{}
	var out []RunInfo
	for _, r := range runs {
		if !all && r.Status != store.RunInFlight {
			continue
		}
		info := RunInfo{Run: r}
		if r.Status == store.RunInFlight {
			h, ok := holders[r.Workspace]
			if !ok {
				if h, err = holder(ctx, r.Workspace); err != nil {
					return nil, fmt.Errorf("list runs: %w", err)
				}
				holders[r.Workspace] = h
			}
			if h.Live && r.Holder == h.Driver() {
				info.Owner, info.Live = h, true
			}
		}
		out = append(out, info)
	}
	return out, nil
}

// Discard abandons an in-flight run: a later wake never finishes it. Its
// sessions and rows stay.
func Discard(ctx context.Context, s store.Store, ws, id string, now time.Time) error {
	r, ok, err := s.Run(ctx, id)
	if err != nil {
		return fmt.Errorf("discard %s: %w", id, err)
	}
	if !ok || r.Workspace != ws {
		return fmt.Errorf("no run %s in this workspace (flower ps --all lists them)", id)
	}
	if r.Status != store.RunInFlight {
		return fmt.Errorf("run %s is not in flight: it is %s", id, r.Status)
	}
	r.Status, r.Outcome, r.Holder, r.Updated = store.RunDiscarded, "discarded", "", now
	if err := s.Commit(ctx, store.Batch{Run: &r}); err != nil {
		return fmt.Errorf("discard %s: %w", id, err)
	}
	return nil
}

// DiscardAll abandons every in-flight run of a workspace and returns their
// ids (flower --reset, /new).
func DiscardAll(ctx context.Context, s store.Store, ws string, now time.Time) ([]string, error) {
	runs, err := s.Runs(ctx, ws)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	var ids []string
	for _, r := range runs {
		if r.Status != store.RunInFlight {
			continue
		}
		if err := Discard(ctx, s, ws, r.ID, now); err != nil {
			return ids, err
		}
		ids = append(ids, r.ID)
	}
	return ids, nil
}
