package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// BenchmarkCreate is a new store's fixed cost to a process, as `flower
// once` in a new workspace pays it: open a new file (its directory
// included), commit one response, close. Issue 12 ("Creating a store" in
// doc.go); figures in BENCHMARKS.md, "Wall time of a 12-turn tool session".
func BenchmarkCreate(b *testing.B) {
	ctx := context.Background()
	cpu := cpuTime()
	for b.Loop() {
		db, err := sqlite.Open(filepath.Join(b.TempDir(), "runs", "sessions.db"))
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Commit(ctx, store.Batch{Entries: []store.Entry{assistant("k", 1)}, Meta: []store.Meta{{Key: "k"}}}); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
}
