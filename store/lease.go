package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Leases (DESIGN.md §3.6): one process at a time drives the runs of a
// workspace. Each backend hands leases out its own way, a file lock in the
// run dir for SQLite (store/sqlite), an advisory lock on the writing
// connection for PostgreSQL (store/postgres), and both speak of them in the
// words below.

// ErrBusy is the error of a lease refused because another live process
// holds it. The refusal is a *BusyError naming the holder.
var ErrBusy = errors.New("in use")

// Holder is who holds a lease, or held it last.
type Holder struct {
	Name string `json:"-"` // what is leased: a run dir, a workspace
	PID  int    `json:"pid"`
	Host string `json:"host"`
	// Since is when the holder took the lease.
	Since time.Time `json:"since"`
	// Heartbeat is the holder's last sign of life, where the lease has
	// one (PostgreSQL); zero for a file lock, which needs none.
	Heartbeat time.Time `json:"heartbeat,omitzero"`
	// Live says the lease is held now, by a holder that still shows signs
	// of life: one that is not is taken over by the next Lease.
	Live bool `json:"-"`
}

// Driver is the holder as a run row names it (Run.Holder).
func (h Holder) Driver() string { return fmt.Sprintf("%s pid %d", h.Host, h.PID) }

// BusyError is a lease refused because another process holds it.
type BusyError struct{ Holder Holder }

func (e *BusyError) Error() string {
	h := e.Holder
	return fmt.Sprintf("%v: flower pid %d on %s has held %s since %s", ErrBusy, h.PID, h.Host, h.Name, h.Since.Local().Format("15:04:05"))
}

func (e *BusyError) Unwrap() error { return ErrBusy }

// A Leaser hands out leases by name.
type Leaser interface {
	// Lease makes this process the holder of name, or fails at once with
	// a *BusyError naming the live holder.
	Lease(ctx context.Context, name string) (Lease, error)
	// Holder reports who holds name, or held it last (a zero Holder if
	// no one), without taking it: readers never make a driver wait.
	Holder(ctx context.Context, name string) (Holder, error)
}

// A Lease is held until Release, or until it is lost.
type Lease interface {
	// Lost is closed once the lease is known to be gone: its holder must
	// stop driving, as another may have taken over. A lease that cannot
	// be lost (a file lock) returns nil.
	Lost() <-chan struct{}
	// Release gives the lease up; releasing twice is harmless.
	Release()
}
