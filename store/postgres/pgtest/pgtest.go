// Package pgtest gives tests a PostgreSQL store of their own: a fresh
// schema in the server named by FLOWER_TEST_POSTGRES, dropped when the
// test ends. .ci/postgres.sh starts a throwaway server and prints the
// variable:
//
//	eval "$(.ci/postgres.sh start /tmp/flower-pg)"
//
// Without the variable the tests skip with one line saying so, except in
// CI (CI=true), where they fail: there they must run.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Env names the server the tests use.
const Env = "FLOWER_TEST_POSTGRES"

// Server returns the URL of the test server, or skips t (fails it in CI)
// when none is set.
func Server(t testing.TB) string {
	t.Helper()
	u := os.Getenv(Env)
	if u == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set: .ci/run starts a server with .ci/postgres.sh", Env)
		}
		t.Skipf(`PostgreSQL tests skipped: set %s (eval "$(.ci/postgres.sh start /tmp/flower-pg)")`, Env)
	}
	return u
}

// URL creates an empty schema in the test server and returns a URL whose
// connections use it (search_path), so that every test has a database of
// its own. The schema is dropped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	server := Server(t)
	var b [6]byte
	rand.Read(b[:])
	schema := "flower_test_" + hex.EncodeToString(b[:])
	exec(t, server, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { exec(t, server, `DROP SCHEMA `+schema+` CASCADE`) })
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Exec runs statements on the database of url with a connection of its
// own: how tests build schemas flower did not write, or kill backends.
func Exec(t testing.TB, url string, stmts ...string) {
	t.Helper()
	exec(t, url, stmts...)
}

func exec(t testing.TB, url string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	defer c.Close(ctx)
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}
