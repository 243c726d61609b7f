package flower

import (
	"context"
	"os"
	"path/filepath"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow"
	"github.com/flower-run/flower/workflow/starter"
)

// Status is what a wake would continue in a workspace, read without
// writing anything (flower status, R3.6).
type Status struct {
	State    starter.State      // the thread: brief, goals, steps, wakes
	InFlight []workflow.RunInfo // the runs in flight and who drives them
	Spent    *Spent             // what the runs cost; nil when there is no store or it cannot be read
	Files    []config.ReadFile  // the configuration files a run reads
	Older    bool               // the run dir's state is an older flower's (OlderState)
}

// Nothing reports that a wake would have nothing to continue.
func (st Status) Nothing() bool {
	return !st.State.Waking && len(st.State.Steps) == 0 && len(st.InFlight) == 0
}

// ReadStatus gathers the Status of ws from s (nil: no store yet) and the
// run dir.
func ReadStatus(ctx context.Context, s store.Store, runDir, ws string) (Status, error) {
	st := Status{Files: config.FilesRead(ws), Older: OlderState(runDir)}
	if s != nil {
		var err error
		if st.InFlight, err = Runs(ctx, s, runDir, ws, false); err != nil {
			return Status{}, err
		}
		if sp, err := Spending(ctx, s, ws); err == nil {
			st.Spent = &sp
		}
	}
	st.State = starter.WakeState(ws, s)
	return st, nil
}

// OlderState reports that the run dir's run state is still in an older
// flower's files: the next wake imports it.
func OlderState(runDir string) bool {
	_, err := os.Stat(filepath.Join(runDir, oldStateFile))
	return err == nil
}
