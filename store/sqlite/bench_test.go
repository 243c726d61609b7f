package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// assistant is a realistic assistant entry of about 1 KB of JSON: some
// reasoning, a sentence, and a Write call.
func assistant(key string, n int) store.Entry {
	input, _ := json.Marshal(map[string]string{
		"file_path": "/home/me/proj/internal/render/html.go",
		"content":   strings.Repeat("func render(w io.Writer) error { return nil }\n", 6),
	})
	return store.Entry{
		UUID: fmt.Sprintf("%s#%d", key, n), Parent: fmt.Sprintf("%s#%d", key, n-1),
		Key: key, Kind: store.KindAssistant, Time: time.Date(2025, 1, 1, 0, 0, 0, n, time.UTC),
		Message: &model.Message{Role: model.Assistant, Content: []model.Block{
			&model.Thinking{Thinking: strings.Repeat("The renderer needs a writer. ", 8), Signature: strings.Repeat("c2ln", 20)},
			&model.Text{Text: "I'll add the HTML renderer next, then its tests."},
			&model.ToolUse{ID: fmt.Sprintf("toolu_%08d", n), Name: "Write", Input: input},
		}},
		Model: "claude-sonnet-4-5", StopReason: model.StopToolUse,
		Usage: &model.Usage{Input: 12, Output: 340, CacheRead: 48000}, Cost: 0.0213,
	}
}

// opStarted is the write-ahead intent of the n-th entry's tool call.
func opStarted(key string, n int) store.Entry {
	return store.Entry{
		UUID: fmt.Sprintf("%s#%d", key, n), Parent: fmt.Sprintf("%s#%d", key, n-1),
		Key: key, Kind: store.KindOpStarted, Time: time.Date(2025, 1, 1, 0, 0, 0, n, time.UTC),
		Op: &store.Op{ID: fmt.Sprintf("toolu_%08d", n), Tool: "Write", Class: "effect",
			Input: json.RawMessage(`{"file_path":"/home/me/proj/a.go"}`)},
	}
}

func benchStore(b *testing.B) *sqlite.DB {
	return open(b, filepath.Join(b.TempDir(), "sessions.db"))
}

// entrySize reports the mean size of the stored entry bodies, in bytes.
func entrySize(b *testing.B, db *sqlite.DB) {
	var size float64
	err := sqlite.RawDB(db).QueryRow(`SELECT avg(length(CAST(body AS BLOB))) FROM entries`).Scan(&size)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(size, "B/entry")
}

// BenchmarkAppend is the hot path: one model response per transaction,
// each fsync'd.
func BenchmarkAppend(b *testing.B) {
	db := benchStore(b)
	ctx := context.Background()
	n := 0
	cpu := cpuTime()
	for b.Loop() {
		n++
		if err := db.Append(ctx, assistant("-home-me-proj/s", n)); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "entries/s")
	entrySize(b, db)
}

// BenchmarkAppendBatch writes a response with the intents of its two tool
// calls in one transaction, as write-ahead does.
func BenchmarkAppendBatch(b *testing.B) {
	db := benchStore(b)
	ctx := context.Background()
	n := 0
	cpu := cpuTime()
	for b.Loop() {
		n += 3
		err := db.Append(ctx, assistant("-home-me-proj/s", n-2), opStarted("-home-me-proj/s", n-1), opStarted("-home-me-proj/s", n))
		if err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkLoad10k loads a long session: what a resume pays.
func BenchmarkLoad10k(b *testing.B) {
	const total = 10_000
	db := benchStore(b)
	ctx := context.Background()
	batch := make([]store.Entry, 0, 500)
	for i := range total {
		batch = append(batch, assistant("-home-me-proj/s", i))
		if len(batch) == cap(batch) {
			appendAll(b, db, batch...)
			batch = batch[:0]
		}
	}
	loads := 0
	for b.Loop() {
		got, err := db.Load(ctx, "-home-me-proj/s")
		if err != nil || len(got) != total {
			b.Fatalf("Load: %d entries, %v", len(got), err)
		}
		loads++
	}
	b.ReportMetric(float64(loads*total)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkLastRare10k finds the newest entry of a kind a long session
// holds once, near its start (a first prompt, an early handoff): the
// worst case for a walk back through the session. "seek" is the store as
// it is; "walk" drops entries_key_kind_seq, as a version-1 store had it
// (issue 12).
func BenchmarkLastRare10k(b *testing.B) {
	const total = 10_000
	for _, mode := range []string{"seek", "walk"} {
		b.Run(mode, func(b *testing.B) {
			db := benchStore(b)
			ctx := context.Background()
			first := note("-home-me-proj/s", 0)
			first.Kind = store.KindUser
			batch := []store.Entry{first}
			for i := 1; i < total; i++ {
				batch = append(batch, assistant("-home-me-proj/s", i))
				if len(batch) == 500 {
					appendAll(b, db, batch...)
					batch = batch[:0]
				}
			}
			if mode == "walk" {
				if _, err := sqlite.RawDB(db).Exec(`DROP INDEX entries_key_kind_seq`); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				e, ok, err := db.Last(ctx, "-home-me-proj/s", store.KindUser)
				if err != nil || !ok || e.UUID != first.UUID {
					b.Fatalf("Last = %s, %v, %v", e.UUID, ok, err)
				}
			}
		})
	}
}
