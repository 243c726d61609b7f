package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/postgres/pgtest"
	"github.com/flower-run/flower/store/storetest"
)

var storetestRun = storetest.Run

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openNew(t)
	})
}

// openNew opens a store in a new, empty schema.
func openNew(t *testing.T) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestSchemaMismatch: a store of a version this flower does not know is
// refused with both versions, and left as it was.
func TestSchemaMismatch(t *testing.T) {
	url := pgtest.URL(t)
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	pgtest.Exec(t, url, `UPDATE flower_schema SET version = 99`)
	_, err = postgres.Open(context.Background(), url)
	if !errors.Is(err, store.ErrSchema) || !strings.Contains(err.Error(), "schema version 99, this flower reads 3") {
		t.Fatalf("Open = %v, want ErrSchema naming versions 99 and 3", err)
	}
	if v, err := postgres.Version(context.Background(), url); err == nil {
		t.Errorf("Version = %d, nil; want the refusal", v)
	}
}

// TestNotStore: another program's table of one of our names, without
// flower_schema, is refused; other programs' tables beside ours are not.
func TestNotStore(t *testing.T) {
	url := pgtest.URL(t)
	pgtest.Exec(t, url, `CREATE TABLE entries (id integer)`)
	if _, err := postgres.Open(context.Background(), url); !errors.Is(err, store.ErrNotStore) {
		t.Fatalf("Open = %v, want ErrNotStore", err)
	}

	url = pgtest.URL(t)
	pgtest.Exec(t, url, `CREATE TABLE users (id integer)`)
	db, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("Open beside another program's table: %v", err)
	}
	db.Close()
	if v, err := postgres.Version(context.Background(), url); err != nil || v != store.SchemaVersion {
		t.Errorf("Version = %d, %v; want %d", v, err, store.SchemaVersion)
	}
}

// TestConcurrentOpen: processes opening a new database at once agree on
// one schema: the migration lock makes the later ones wait.
func TestConcurrentOpen(t *testing.T) {
	url := pgtest.URL(t)
	const n = 4
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			db, err := postgres.Open(context.Background(), url)
			if err == nil {
				e := store.Entry{UUID: fmt.Sprint("u", i), Key: fmt.Sprint("k", i), Kind: store.KindNote}
				err = errors.Join(db.Append(context.Background(), e), db.Close())
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Open and append: %v", err)
		}
	}
}

// TestBadURL: a URL that does not parse or reaches no server is one line
// naming the store, without its password.
func TestBadURL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := postgres.Open(ctx, "postgres://me:secret@/db?host=/nonexistent-dir&connect_timeout=1")
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "/db") {
		t.Errorf("Open = %v, want an error naming the store without the password", err)
	}
}
