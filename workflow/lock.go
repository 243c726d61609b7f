package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

// LockFile marks the process driving the runs of a run dir. The lock is an
// flock, so it dies with its process: a crash never leaves a stale lease
// (DESIGN.md §3.6).
const LockFile = "flower.lock"

// Owner is who holds the lock.
type Owner struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
}

// ErrBusy is returned when another live process drives the run dir.
var ErrBusy = errors.New("run dir in use")

// Lock takes the run dir for this process. It fails at once, naming the
// holder, when another live process has it.
func Lock(runDir string, now time.Time) (unlock func(), err error) {
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, fmt.Errorf("lock run dir: %w", err)
	}
	path := filepath.Join(runDir, LockFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock run dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		o, _ := Holder(runDir)
		return nil, fmt.Errorf("%w: flower pid %d on %s has driven %s since %s: wait for it, stop it, or give this one its own -r RUN_DIR",
			ErrBusy, o.PID, o.Host, runDir, o.Since.Format("15:04:05"))
	}
	host, _ := os.Hostname()
	data, _ := json.Marshal(Owner{PID: os.Getpid(), Host: host, Since: now})
	f.Truncate(0)
	f.WriteAt(data, 0)
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// Holder reports who last took the lock and whether it is held now.
func Holder(runDir string) (Owner, bool) {
	path := filepath.Join(runDir, LockFile)
	var o Owner
	data, err := os.ReadFile(path)
	if err != nil {
		return o, false
	}
	json.Unmarshal(data, &o)
	f, err := os.Open(path)
	if err != nil {
		return o, false
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return o, true
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return o, false
}

// InFlight is the run of a run dir as flower ps shows it.
type InFlight struct {
	Run, Status, Step, Session string
	Done                       []string
	Owner                      Owner
	Live                       bool // a process drives it now
}

// Runs lists the run of runDir, if its state file holds one.
func Runs(runDir string) []InFlight {
	st, _ := loadState(runDir)
	if st == nil {
		return nil
	}
	f := InFlight{Run: st.Run, Status: st.Status, Step: st.Step, Session: st.Session}
	for name, ok := range st.Done {
		if ok {
			f.Done = append(f.Done, name)
		}
	}
	sort.Strings(f.Done)
	f.Owner, f.Live = Holder(runDir)
	return []InFlight{f}
}

// Discard abandons an in-flight run: the next wake starts a new one. The
// run's sessions and rows stay.
func Discard(runDir, run string) error {
	st, _ := loadState(runDir)
	if st == nil || st.Run != run {
		return fmt.Errorf("no run %s in %s (flower ps lists them)", run, runDir)
	}
	if st.Status != StatusRunning {
		return fmt.Errorf("run %s is not in flight: it is %s", run, st.Status)
	}
	st.Status = StatusDiscarded
	return st.save()
}

// Reset removes the in-flight run state of runDir; sessions, lineage and
// manifest stay.
func Reset(runDir string) error {
	err := os.Remove(filepath.Join(runDir, StateFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reset: %w", err)
	}
	return nil
}
