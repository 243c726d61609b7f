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
	return (&keeper{s: s, ws: ws}).sync(ctx)
}

// keeper syncs the notes of one flow. It reads each note's kept text from
// the store once and then remembers what it kept: the flow is the notes'
// only writer while it holds the run, and it syncs before every step and
// every judge round (issue 19: a read per note each time, on a shared
// PostgreSQL, was ten round trips a run).
type keeper struct {
	s    store.Store
	ws   string
	kept map[string]string // rel → the store's text; absent: not read yet
}

func (k *keeper) sync(ctx context.Context) (restored []string, err error) {
	if k.kept == nil {
		k.kept = map[string]string{}
	}
	for _, rel := range keptNotes {
		path := filepath.Join(k.ws, rel)
		data, rerr := os.ReadFile(path)
		kept, ok := k.kept[rel]
		if !ok {
			if kept, _, err = k.s.Summary(ctx, noteKey(k.ws, rel)); err != nil {
				return restored, fmt.Errorf("keep %s: %w", rel, err)
			}
			k.kept[rel] = kept
		}
		switch {
		case rerr == nil && len(data) > 0:
			if string(data) != kept {
				if err := k.s.PutSummary(ctx, noteKey(k.ws, rel), string(data)); err != nil {
					return restored, fmt.Errorf("keep %s: %w", rel, err)
				}
				k.kept[rel] = string(data)
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
