package main

import (
	"context"
	"net/url"
	"os"

	"github.com/spf13/pflag"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
)

// storeEnv names the store when --store is not given (issue 14).
const storeEnv = "FLOWER_STORE"

func addStoreFlag(pf *pflag.FlagSet, g *globals) {
	pf.StringVar(&g.store, "store", "", `where sessions and run state live: a postgres://... URL for runs shared by many machines (default $`+storeEnv+`, else sessions.db in the run dir)`)
}

// storeURL is the PostgreSQL store chosen by --store or FLOWER_STORE, ""
// for the run dir's SQLite file. Anything else is refused with the fix.
func (g *globals) storeURL() (string, error) {
	u, from := g.store, "--store"
	if u == "" {
		u, from = os.Getenv(storeEnv), storeEnv
	}
	if u == "" || postgres.IsURL(u) {
		return u, nil
	}
	return "", usageErr("%s %q: want a postgres://USER@HOST/DB URL, or leave it unset for SQLite in the run dir", from, u)
}

// hasStore reports whether there may be run state to continue: a database
// store always may; the run dir's only once it holds a store.
func (g *globals) hasStore() bool {
	if u, err := g.storeURL(); err == nil && u != "" {
		return true
	}
	return flower.HasState(g.runDir)
}

// open opens the chosen store, creating (or upgrading) its schema.
func (g *globals) open(ctx context.Context) (store.Store, error) {
	u, err := g.storeURL()
	if err != nil {
		return nil, err
	}
	s, err := flower.OpenStore(ctx, g.runDir, u)
	return s, fail(err)
}

// redactURL is a store URL as a person may see it: without its password.
func redactURL(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Redacted()
	}
	return "the --store database"
}
