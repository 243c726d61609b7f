package workflow

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flower-run/flower/internal/atomicfile"
)

// StateFile holds the state of the run in flight, replaced atomically at
// every step boundary, so a wake after a crash knows which steps are done
// and which one to finish (R3.1, R5.5).
const StateFile = "state.json"

// Run statuses.
const (
	StatusRunning   = "running"
	StatusDone      = "done"
	StatusFailed    = "failed"
	StatusDiscarded = "discarded" // abandoned: by the discard policy or flower discard
)

// runState is the durable state of one run.
type runState struct {
	Run     string          `json:"run"`
	Status  string          `json:"status"`
	Done    map[string]bool `json:"done"`    // steps (plain names) completed in this run
	Step    string          `json:"step"`    // the step in flight
	Session string          `json:"session"` // its session, once known
	Round   int             `json:"round"`   // judge rounds started
	Judge   string          `json:"judge"`   // the session of the judge round in flight
	Prompt  string          `json:"prompt"`  // the prompt the step in flight was started with
	path    string
}

// loadState reads the run state; a missing or corrupt file is no state.
func loadState(runDir string) (*runState, string) {
	path := filepath.Join(runDir, StateFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, ""
	}
	var s runState
	if err := json.Unmarshal(data, &s); err != nil || s.Run == "" {
		return nil, fmt.Sprintf("ignored %s: not a run state: starting a new run", path)
	}
	if s.Done == nil {
		s.Done = map[string]bool{}
	}
	s.path = path
	return &s, ""
}

func newState(runDir, run, prompt string) *runState {
	return &runState{Run: run, Status: StatusRunning, Done: map[string]bool{}, Prompt: prompt,
		path: filepath.Join(runDir, StateFile)}
}

// save replaces the state file atomically.
func (s *runState) save() error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return fmt.Errorf("save run state: %w", err)
	}
	if err := atomicfile.WriteFile(s.path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("save run state: %w", err)
	}
	return nil
}
