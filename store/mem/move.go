package mem

import (
	"context"
	"fmt"

	"github.com/flower-run/flower/store"
)

var _ store.Mover = (*Store)(nil)

// Move re-keys the records of workspace from to to, all at once
// (store.Mover).
func (s *Store) Move(ctx context.Context, from, to string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("move %s: %w", from, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.holds(from) {
		return nil
	}
	if s.holds(to) {
		return fmt.Errorf("move %s to %s: %w", from, to, store.ErrMoveTarget)
	}
	if other := s.sharer(from); other != "" {
		return fmt.Errorf("move %s: %w: %s", from, store.ErrMoveShared, other)
	}
	s.entries = movedMap(s.entries, from, to, func(es []store.Entry, key string) []store.Entry {
		for i := range es {
			es[i].Key = key
		}
		return es
	})
	s.meta = movedMap(s.meta, from, to, func(m store.Meta, key string) store.Meta {
		m.Key = key
		if m.Workspace == from {
			m.Workspace = to
		}
		if k, ok := store.MovedKey(m.ForkOf, from, to); ok {
			m.ForkOf = k
		}
		return m
	})
	s.summaries = movedMap(s.summaries, from, to, func(t string, _ string) string { return t })
	for i := range s.runs {
		if s.runs[i].Workspace == from {
			s.runs[i].Workspace = to
		}
	}
	if t, ok := s.threads[from]; ok {
		for i := range t.bindings {
			t.bindings[i].Workspace = to
		}
		s.threads[to] = t
		delete(s.threads, from)
	}
	s.ev.mu.Lock()
	defer s.ev.mu.Unlock()
	s.ev.streams = movedMap(s.ev.streams, from, to, func(evs []store.Event, key string) []store.Event {
		for i := range evs {
			evs[i].Stream = key
		}
		return evs
	})
	return nil
}

// holds reports whether workspace ws has runs, a thread or sessions.
func (s *Store) holds(ws string) bool {
	if _, ok := s.threads[ws]; ok {
		return true
	}
	for _, r := range s.runs {
		if r.Workspace == ws {
			return true
		}
	}
	for k := range s.entries {
		if _, ok := store.MovedKey(k, ws, ws); ok {
			return true
		}
	}
	for k := range s.meta {
		if _, ok := store.MovedKey(k, ws, ws); ok {
			return true
		}
	}
	return false
}

// movedMap is m with the values under from's keys moved to to's keys,
// each passed through f with its new key.
func movedMap[V any](m map[string]V, from, to string, f func(V, string) V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		if nk, ok := store.MovedKey(k, from, to); ok {
			out[nk] = f(v, nk)
			continue
		}
		out[k] = v
	}
	return out
}

// sharer is a workspace other than ws whose records share ws's keys
// (store.SharesKeys), or "".
func (s *Store) sharer(ws string) string {
	for _, r := range s.runs {
		if store.SharesKeys(ws, r.Workspace) {
			return r.Workspace
		}
	}
	for w := range s.threads {
		if store.SharesKeys(ws, w) {
			return w
		}
	}
	for _, m := range s.meta {
		if store.SharesKeys(ws, m.Workspace) {
			return m.Workspace
		}
	}
	return ""
}
