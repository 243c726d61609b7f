package postgres_test

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
	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/postgres/pgtest"
	"github.com/flower-run/flower/store/sqlite"
)

// turn is the n-th tool turn of a session as the agent loop commits it:
// the response with the intent of its effect call, then the result.
func turn(key string, n int) (response []store.Entry, result store.Entry) {
	at := time.Date(2025, 1, 1, 0, 0, 0, n, time.UTC)
	id := fmt.Sprintf("toolu_%08d", n)
	input, _ := json.Marshal(map[string]string{"file_path": "/w/a.go", "content": strings.Repeat("func f() {}\n", 20)})
	u := func(i int) string { return fmt.Sprintf("%s#%d.%d", key, n, i) }
	response = []store.Entry{
		{UUID: u(0), Parent: u(-1), Key: key, Kind: store.KindAssistant, Time: at, Model: "m", StopReason: model.StopToolUse,
			Message: &model.Message{Role: model.Assistant, Content: []model.Block{
				&model.Text{Text: "Writing a.go."}, &model.ToolUse{ID: id, Name: "Write", Input: input}}}},
		{UUID: u(1), Parent: u(0), Key: key, Kind: store.KindOpStarted, Time: at,
			Op: &store.Op{ID: id, Tool: "Write", Class: "effect", Input: input}},
	}
	result = store.Entry{UUID: u(2), Parent: u(1), Key: key, Kind: store.KindResult, Time: at,
		Op:      &store.Op{ID: id, Tool: "Write", Content: "wrote 240 bytes"},
		Message: &model.Message{Role: model.User, Content: []model.Block{&model.ToolResult{ToolUseID: id, Content: "wrote 240 bytes"}}}}
	return response, result
}

// BenchmarkTurnCommits: the two durable commits of one tool turn, on
// SQLite (WAL, synchronous=FULL) and on PostgreSQL (synchronous_commit=on,
// through a lease, fenced, as a driver writes; the server of
// FLOWER_TEST_POSTGRES), in one run so that they compare.
func BenchmarkTurnCommits(b *testing.B) {
	ctx := context.Background()
	run := func(b *testing.B, s store.Store) {
		b.ResetTimer()
		for i := range b.N {
			response, result := turn("-w/s", i)
			if err := s.Append(ctx, response...); err != nil {
				b.Fatal(err)
			}
			if err := s.Append(ctx, result); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/turn")
	}
	b.Run("sqlite", func(b *testing.B) {
		db, err := sqlite.Open(filepath.Join(b.TempDir(), "sessions.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		run(b, db)
	})
	b.Run("postgres", func(b *testing.B) {
		db, err := postgres.Open(ctx, pgtest.URL(b))
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		l, err := db.Acquire(ctx, "/w")
		if err != nil {
			b.Fatal(err)
		}
		defer l.Release()
		run(b, l.Store())
	})
}
