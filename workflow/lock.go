package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flower-run/flower/store"
)

// LockFile marks the process driving the runs of a run dir. The lock is a
// file lock held open by its process, so it dies with it: a crash never
// leaves a stale lease (DESIGN.md §3.6). Readers (flower ps, status) test
// it without taking it, so they never make a starting flower wait or fail.
const LockFile = "flower.lock"

// Owner is who holds the lock.
type Owner struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
	// Heartbeat is the holder's last sign of life, where the lease has
	// one (a database lease); zero for the run dir's file lock.
	Heartbeat time.Time `json:"heartbeat,omitzero"`
}

// ErrBusy is returned when another live process drives the run dir.
var ErrBusy = errors.New("run dir in use")

// Lock takes the run dir for this process. It fails at once, naming the
// holder, when another live process has it.
func Lock(runDir string, now time.Time) (unlock func(), err error) {
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return nil, fmt.Errorf("lock run dir: %w", err)
	}
	path := filepath.Join(runDir, LockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock run dir: %w", err)
	}
	if err := lockFD(f); err != nil {
		f.Close()
		o, _ := Holder(runDir)
		return nil, fmt.Errorf("%w: flower pid %d on %s has driven %s since %s: wait for it to end or stop it (flower ps shows it)",
			ErrBusy, o.PID, o.Host, runDir, o.Since.Format("15:04:05"))
	}
	host, _ := os.Hostname()
	data, _ := json.Marshal(Owner{PID: os.Getpid(), Host: host, Since: now})
	f.Truncate(0)
	f.WriteAt(data, 0)
	return func() { unlockFD(f); f.Close() }, nil
}

// Holder reports who last took the lock and whether it is held now. It
// only tests the lock.
func Holder(runDir string) (Owner, bool) {
	path := filepath.Join(runDir, LockFile)
	var o Owner
	f, err := os.Open(path)
	if err != nil {
		return o, false
	}
	defer f.Close()
	data, _ := os.ReadFile(path)
	json.Unmarshal(data, &o)
	return o, lockedFD(f)
}

// RunInfo is a run as flower ps shows it.
type RunInfo struct {
	store.Run
	Owner Owner
	Live  bool // a process drives it now
}

// List returns the runs of a workspace: the ones in flight, or all of them,
// oldest first. It reads the store only.
func List(ctx context.Context, s store.Store, runDir, ws string, all bool) ([]RunInfo, error) {
	runs, err := s.Runs(ctx, ws)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	owner, live := Holder(runDir)
	var out []RunInfo
	for _, r := range runs {
		if !all && r.Status != store.RunInFlight {
			continue
		}
		info := RunInfo{Run: r}
		if r.Status == store.RunInFlight && r.Holder == fmt.Sprintf("%s pid %d", owner.Host, owner.PID) {
			info.Owner, info.Live = owner, live
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
