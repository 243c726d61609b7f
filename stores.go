package flower

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/sqlite"
)

// OpenStore opens the store at url (postgres://...), or the SQLite store
// in runDir when url is "", creating or upgrading its schema. It takes no
// lease: a process that writes run state goes through Open.
func OpenStore(ctx context.Context, runDir, url string) (store.Store, error) {
	if url != "" {
		return orNil(postgres.Open(ctx, url))
	}
	return orNil(sqlite.Open(filepath.Join(runDir, StoreFile)))
}

// orNil is a store and an error with no typed nil in the store.
func orNil[S store.Store](s S, err error) (store.Store, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ReadStore opens the store for a command that only reads; it is nil,
// and nothing is created or upgraded, when there is no store of this
// version yet: a file a starting flower has just created, or a store of
// an older flower (the next wake upgrades it), holds no run state yet.
func ReadStore(ctx context.Context, runDir, url string) (store.Store, error) {
	if url != "" {
		if v, err := postgres.Version(ctx, url); err != nil || v < store.SchemaVersion {
			return nil, err
		}
		return orNil(postgres.Open(ctx, url))
	}
	path := filepath.Join(runDir, StoreFile)
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	if v, err := sqlite.Version(path); err == nil && v < store.SchemaVersion {
		return nil, nil
	}
	return orNil(sqlite.Open(path))
}

// Sessions are the workspace's top-level sessions (no subagents) whose id
// starts with prefix, oldest first.
func Sessions(ctx context.Context, s store.Store, ws, prefix string) ([]store.Meta, error) {
	all, err := s.Sessions(ctx, store.ProjectKey(ws)+"/"+prefix)
	if err != nil {
		return nil, err
	}
	var out []store.Meta
	for _, m := range all {
		if !strings.Contains(SessionID(ws, m.Key), "/") {
			out = append(out, m)
		}
	}
	return out, nil
}

// SessionID is the id of the session stored under key in workspace ws.
func SessionID(ws, key string) string {
	return strings.TrimPrefix(key, store.ProjectKey(ws)+"/")
}

// ResolveSession turns a session id or a unique prefix of one into the
// id. An unknown id is returned as it is, for the caller's own message;
// an ambiguous prefix is a *UsageError listing the candidates.
func ResolveSession(ctx context.Context, s store.Store, ws, id string) (string, error) {
	if _, ok, err := s.Meta(ctx, store.SessionKey(ws, id)); err != nil || ok {
		return id, err
	}
	metas, err := Sessions(ctx, s, ws, id)
	if err != nil {
		return "", err
	}
	switch len(metas) {
	case 0:
		return id, nil
	case 1:
		return SessionID(ws, metas[0].Key), nil
	}
	ids := make([]string, len(metas))
	for i, m := range metas {
		ids[i] = SessionID(ws, m.Key)
	}
	return "", usage("session prefix %q is ambiguous: %s (give more of the id)", id, strings.Join(ids, ", "))
}
