package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flower-run/flower/store"
)

// LockFile marks the process driving the runs of a run dir. The lease of
// a directory is a file lock held open by its process, so it dies with
// it: a crash never leaves a stale lease (DESIGN.md §3.6). Readers (flower
// ps, status) test it without taking it, so they never make a starting
// flower wait or fail. The file holds the holder as JSON (store.Holder).
const LockFile = "flower.lock"

// Dirs leases directories, a run dir or a workspace's state directory, by
// the file lock of LockFile in them: the lease of a store on SQLite. Now
// stamps a lease's Since (nil: time.Now).
type Dirs struct{ Now func() time.Time }

var _ store.Leaser = Dirs{}

// Lease takes dir for this process, creating it if need be. It fails at
// once with a *store.BusyError naming the holder when another live
// process has it.
func (d Dirs) Lease(ctx context.Context, dir string) (store.Lease, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock run dir: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock run dir: %w", err)
	}
	if err := lockFD(f); err != nil {
		f.Close()
		h, _ := d.Holder(ctx, dir)
		h.Live = true
		return nil, &store.BusyError{Holder: h}
	}
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	host, _ := os.Hostname()
	data, _ := json.Marshal(store.Holder{PID: os.Getpid(), Host: host, Since: now()})
	f.Truncate(0)
	f.WriteAt(data, 0)
	return &dirLease{f: f}, nil
}

// Holder reports who last took dir's lock and whether it is held now. It
// only tests the lock.
func (Dirs) Holder(_ context.Context, dir string) (store.Holder, error) {
	path := filepath.Join(dir, LockFile)
	h := store.Holder{Name: dir}
	f, err := os.Open(path)
	if err != nil {
		return h, nil
	}
	defer f.Close()
	data, _ := os.ReadFile(path)
	json.Unmarshal(data, &h)
	h.Live = lockedFD(f)
	return h, nil
}

// dirLease is a held file lock.
type dirLease struct{ f *os.File }

// Lost is nil: a file lock is lost only with its process.
func (l *dirLease) Lost() <-chan struct{} { return nil }

func (l *dirLease) Release() {
	if l.f == nil {
		return
	}
	unlockFD(l.f)
	l.f.Close()
	l.f = nil
}
