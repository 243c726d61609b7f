package starter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flower-run/flower/internal/atomicfile"
	"github.com/flower-run/flower/store"
)

// The brief and the goals live in the workspace, where the agent works:
// one `rm -rf .flower` or `git clean -fdx` would lose them, and with them
// what the work and the judge go by (issue 10). Their latest text is kept
// in the store, and a note the agent deleted is written back from it.

// keptNotes are the notes kept in the store.
var keptNotes = []string{BriefPath, GoalsPath}

// noteKey is the store key of a note's latest text: a summary, so only
// the newest counts and nothing is rewritten.
func noteKey(ws, rel string) string { return store.SideLog(ws, store.Notes(rel)) }

// SyncNotes keeps the notes of workspace ws: one that exists is saved to
// the store when its text changed; one that is missing (or emptied) is
// written back from the store. It returns the notes it wrote back.
func SyncNotes(ctx context.Context, s store.Store, ws string) (restored []string, err error) {
	if s == nil {
		return nil, nil
	}
	for _, rel := range keptNotes {
		path := filepath.Join(ws, rel)
		data, rerr := os.ReadFile(path)
		kept, _, err := s.Summary(ctx, noteKey(ws, rel))
		if err != nil {
			return restored, fmt.Errorf("keep %s: %w", rel, err)
		}
		switch {
		case rerr == nil && len(data) > 0:
			if string(data) != kept {
				if err := s.PutSummary(ctx, noteKey(ws, rel), string(data)); err != nil {
					return restored, fmt.Errorf("keep %s: %w", rel, err)
				}
			}
		case (rerr == nil || errors.Is(rerr, fs.ErrNotExist)) && kept != "":
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return restored, fmt.Errorf("restore %s: %w", rel, err)
			}
			if err := atomicfile.WriteFile(path, []byte(kept), 0o644); err != nil {
				return restored, fmt.Errorf("restore %s: %w", rel, err)
			}
			restored = append(restored, rel)
		}
	}
	return restored, nil
}

// forgetNotes ends the keeping of the thread's notes: an archived brief
// must not come back.
func forgetNotes(ctx context.Context, s store.Store, ws string) error {
	for _, rel := range keptNotes {
		if err := s.PutSummary(ctx, noteKey(ws, rel), ""); err != nil {
			return fmt.Errorf("forget %s: %w", rel, err)
		}
	}
	return nil
}
