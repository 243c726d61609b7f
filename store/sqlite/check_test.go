package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flower-run/flower/store/sqlite"
)

// TestCheck: a sound store checks clean both ways; a page of the entries
// table overwritten in the file is reported by quick_check and by
// integrity_check (issue 22 item 2, flower doctor).
func TestCheck(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sessions.db")
	db := open(t, path)
	const key = "-home-me-proj/s"
	entries := realistic(key, 400, 1)
	for i := 0; i < len(entries); i += 100 {
		appendAll(t, db, entries[i:i+100]...)
	}
	if _, err := sqlite.RawDB(db).Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, quick := range []bool{true, false} {
		if problems, err := sqlite.Check(ctx, path, quick); err != nil || len(problems) != 0 {
			t.Fatalf("Check(quick %v) of a sound store = %q, %v", quick, problems, err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	if len(data) < 8*page {
		t.Fatalf("store of %d bytes: too small to damage a middle page", len(data))
	}
	// The b-tree header of a middle page: its page type byte and cell count.
	mid := (len(data) / page / 2) * page
	for i := range 8 {
		data[mid+i] = 0xee
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, quick := range []bool{true, false} {
		problems, err := sqlite.Check(ctx, path, quick)
		if err == nil && len(problems) == 0 {
			t.Errorf("Check(quick %v) of a damaged store found nothing", quick)
		}
	}
}

// BenchmarkCheck10k is what a check costs a start on a realistic
// 10,000-entry store (BenchmarkLoadAndView10k's session, 18 MB):
// quick_check, integrity_check, and for scale a cold open of the store
// (issue 22 item 2: should a start after an unclean shutdown check?).
func BenchmarkCheck10k(b *testing.B) {
	const total, key = 10_000, "-home-me-proj/s"
	entries := realistic(key, total, 1)
	path := filepath.Join(b.TempDir(), "sessions.db")
	db := open(b, path)
	for i := 0; i < total; i += 500 {
		appendAll(b, db, entries[i:min(i+500, total)]...)
	}
	db.Close()
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, bm := range []struct {
		name string
		run  func() error
	}{
		{"quick_check", func() error { _, err := sqlite.Check(ctx, path, true); return err }},
		{"integrity_check", func() error { _, err := sqlite.Check(ctx, path, false); return err }},
		{"open", func() error {
			db, err := sqlite.Open(path)
			if err == nil {
				err = db.Close()
			}
			return err
		}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				if err := bm.run(); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu)
			b.ReportMetric(float64(fi.Size())/(1<<20), "MiB")
		})
	}
}
