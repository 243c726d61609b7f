package store

import (
	"context"
	"errors"
	"strings"
)

// A project that moves keeps its state (issue 22 item 3, R3.1). Keys, runs
// and lineage name the workspace's path, so a move re-keys them: one
// transaction takes every record of the old path to the new one, and a
// crash leaves all of them under one path or the other, never split.
//
// It is the one place the runtime rewrites stored entries, against R2.7's
// "nothing written is ever rewritten": only their key changes (in the
// column and in the body, which names it), never what they say, and only
// when a person's project moved and its state is adopted. The other way,
// keys named by a project id instead of a path, would change every
// consumer of ProjectKey and need a migration of every store.

// Mover is a store that can move a workspace's records to another path.
type Mover interface {
	// Move re-keys, in one transaction, the sessions, side logs, event
	// streams and summaries under ProjectKey(from) and the runs, thread
	// and bindings of from to to. It does nothing when from holds
	// nothing (a move already made), refuses with ErrMoveTarget when to
	// already holds runs or sessions, and with ErrMoveShared when another
	// workspace's records share from's keys.
	Move(ctx context.Context, from, to string) error
}

// ErrMoveTarget is Move's refusal to mix two workspaces' records.
var ErrMoveTarget = errors.New("the new path already has state in this store")

// ErrMoveShared is Move's refusal to move a workspace whose keys another
// workspace's records share: ProjectKey reads /, _ and . alike, so
// /srv/my_app and /srv/my-app, in one store (PostgreSQL), have the same
// keys, and moving one would take the other's sessions along.
var ErrMoveShared = errors.New("another workspace's sessions share this path's keys in this store")

// SharesKeys reports whether workspace other's records are under the keys
// of ws without being ws's (Move refuses with ErrMoveShared).
func SharesKeys(ws, other string) bool {
	return other != "" && other != ws && ProjectKey(other) == ProjectKey(ws)
}

// MovedKey is key re-keyed from workspace from to workspace to; ok is
// false when key is not one of from's.
func MovedKey(key, from, to string) (string, bool) {
	p := ProjectKey(from) + "/"
	if !strings.HasPrefix(key, p) {
		return "", false
	}
	return ProjectKey(to) + "/" + key[len(p):], true
}
