package sqlite_test

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/store"
)

// BenchmarkLoadHeads10k loads a session of 10,000 tool results of the
// sizes cmd/flower's wake benchmark stores (200 B to 20 KB from a fixed
// seed, one in a hundred 200 KB: 115 MiB of content) whole with Load and
// with LoadHeads at the view's figures (over 4,000 bytes, heads of 400):
// what a wake with trimming on saves in the store (issue 12).
//
//	go test -run '^$' -bench LoadHeads10k -benchtime 10x ./store/sqlite
func BenchmarkLoadHeads10k(b *testing.B) {
	const total, key = 10_000, "-home-me-proj/s"
	db := benchStore(b)
	rng := rand.New(rand.NewSource(12))
	line := "func example() { return fmt.Sprintf(\"%d\", 42) } // a line of source\n"
	var batch []store.Entry
	for i := range total {
		size := 200 + rng.Intn(20_000-200)
		if i%100 == 99 {
			size = 200_000
		}
		e := store.Entry{Key: key, UUID: fmt.Sprintf("u%05d", i), Kind: store.KindResult, Time: time.Unix(int64(i), 0),
			Op: &store.Op{ID: fmt.Sprintf("toolu_%05d", i), Tool: "Read", Content: strings.Repeat(line, size/len(line)+1)[:size]}}
		if i > 0 {
			e.Parent = fmt.Sprintf("u%05d", i-1)
		}
		if batch = append(batch, e); len(batch) == 500 {
			appendAll(b, db, batch...)
			batch = nil
		}
	}
	ctx := context.Background()
	for _, heads := range []bool{false, true} {
		name := "load"
		if heads {
			name = "heads"
		}
		b.Run(name, func(b *testing.B) {
			cpu := cpuTime()
			var bytes int
			for b.Loop() {
				var got []store.Entry
				var err error
				if heads {
					got, err = db.LoadHeads(ctx, key, 4000, 400)
				} else {
					got, err = db.Load(ctx, key)
				}
				if err != nil || len(got) != total {
					b.Fatalf("%d entries, %v", len(got), err)
				}
				bytes = 0
				for _, e := range got {
					bytes += len(e.Op.Content)
				}
			}
			reportCPU(b, cpu)
			b.ReportMetric(float64(bytes)/(1<<20), "content-MiB")
		})
	}
}
