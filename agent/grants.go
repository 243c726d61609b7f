package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/flower-run/flower/store"
)

// The ask rules a person allowed "for this run" are kept in the side log
// store.Grants of the workspace: a grant lives as long as its workflow
// run, across crashes and wakes, so a resumed run never asks again what
// the person already allowed (issue 10).

// grantRecord is one grant entry's text.
type grantRecord struct {
	Run   string   `json:"run"`
	Rules []string `json:"rules"`
}

// SetRun names the workflow run this runtime works for and restores the
// ask rules the person allowed for it, from the store. Until it is
// called (flower once, an embedder without runs), grants last as long
// as the Runtime.
func (r *Runtime) SetRun(ctx context.Context, runID string) error {
	entries, err := r.store.Load(ctx, r.key(store.Grants, ""))
	if err != nil {
		return fmt.Errorf("load the permission grants: %w", err)
	}
	grants := map[string]bool{}
	for _, e := range entries {
		var g grantRecord
		if err := json.Unmarshal([]byte(e.Text), &g); err != nil {
			return fmt.Errorf("permission grant entry %s: %w", e.UUID, err)
		}
		if g.Run != runID {
			continue
		}
		for _, rule := range g.Rules {
			grants[rule] = true
		}
	}
	r.grantMu.Lock()
	defer r.grantMu.Unlock()
	r.runID, r.grants = runID, grants
	return nil
}

// grant allows rules for the rest of the run: durable first, when the run
// is known, so that a crash right after the call it allowed cannot make
// the resumed run ask again.
func (r *Runtime) grant(ctx context.Context, rules []string) error {
	r.grantMu.Lock()
	defer r.grantMu.Unlock()
	if r.runID != "" {
		text, err := json.Marshal(grantRecord{Run: r.runID, Rules: rules})
		if err != nil {
			return err
		}
		e := store.Entry{UUID: r.newID(), Key: r.key(store.Grants, ""), Kind: store.KindNote, Time: r.now(), Text: string(text)}
		if err := r.store.Append(context.WithoutCancel(ctx), e); err != nil {
			return fmt.Errorf("keep the permission grant: %w", err)
		}
	}
	if r.grants == nil {
		r.grants = map[string]bool{}
	}
	for _, a := range rules {
		r.grants[a] = true
	}
	return nil
}
