package human

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/flower-run/flower/store/postgres"
	"github.com/flower-run/flower/store/postgres/pgtest"
	"github.com/flower-run/flower/tool"
)

// BenchmarkAnswerLatency: from the person's answer to the waiting ask's
// return. in-process: Channel.Answer (flower serve driving the run).
// through-postgres: a Remote on another pool appends the answer and
// notifies; the driver's Follower, woken by its LISTEN connection, reads
// the journal and settles the ask (flower serve --runs, the run driven by
// a worker; issue 14). Each op also asks, so the journal grows by three
// records an op, as a run's does: run it with -benchtime 200x.
func BenchmarkAnswerLatency(b *testing.B) {
	b.Run("in-process", func(b *testing.B) {
		c := New(Options{Timeout: Forever, Workbench: b.TempDir()})
		benchAnswers(b, c, func(id string) { c.Answer(id, "tabs") })
	})
	b.Run("through-postgres", func(b *testing.B) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		url := pgtest.URL(b)
		serve, drive := openPG(b, url), openPG(b, url)
		c := New(Options{Timeout: Forever, Workbench: b.TempDir(), Store: drive, JournalKey: journalKey})
		nudge := make(chan struct{}, 1)
		listening := make(chan struct{}, 1)
		go drive.Listen(ctx, "flower_bench", func(string) {
			select {
			case nudge <- struct{}{}:
			default:
			}
			select {
			case listening <- struct{}{}:
			default:
			}
		})
		<-listening
		f, err := c.Follow(FollowOptions{Nudge: nudge})
		if err != nil {
			b.Fatal(err)
		}
		go f.Run(ctx)
		r := Remote{Store: serve, Key: journalKey}
		benchAnswers(b, c, func(id string) {
			if ok, err := r.Answer(ctx, id, "tabs"); !ok || err != nil {
				b.Fatalf("Answer %s: %v %v", id, ok, err)
			}
			if err := serve.Notify(ctx, "flower_bench", journalKey); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// benchAnswers asks, waits for the ask to be pending, then times answer
// until the ask returns.
func benchAnswers(b *testing.B, c *Channel, answer func(id string)) {
	ask := c.Tools()[0]
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		done := make(chan tool.Result, 1)
		ctx := tool.WithCall(context.Background(), fmt.Sprint("call-", i))
		go func() {
			res, _ := ask.Run(ctx, json.RawMessage(`{"question": "Tabs or spaces?"}`))
			done <- res
		}()
		a, err := c.NextAsk(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		answer(a.ID)
		if res := <-done; res.Content != "The person answered:\n\ntabs" {
			b.Fatalf("ask returned %q", res.Content)
		}
	}
}

func openPG(b *testing.B, url string) *postgres.DB {
	b.Helper()
	d, err := postgres.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}
