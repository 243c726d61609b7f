package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/mem"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/tool"
)

// instant is a zero-latency in-process provider: every response calls the
// Noop tool, so each turn is one model call, one durable response and one
// durable tool result.
type instant struct{ n int }

func (p *instant) Stream(_ context.Context, req *model.Request, _ func(model.Delta)) (*model.Response, error) {
	p.n++
	id := fmt.Sprintf("toolu_%d", p.n)
	return &model.Response{ID: "msg", Model: req.Model, StopReason: model.StopToolUse,
		Usage: model.Usage{Input: 1000, Output: 50},
		Message: model.Message{Role: model.Assistant, Content: []model.Block{
			&model.Text{Text: strings.Repeat("thinking out loud. ", 20)},
			&model.ToolUse{ID: id, Name: "Noop", Input: json.RawMessage(`{"x":1}`)}}}}, nil
}

type noop struct{}

func (noop) Name() string            { return "Noop" }
func (noop) Description() string     { return "does nothing" }
func (noop) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (noop) Class() tool.Class       { return tool.Effect }
func (noop) Run(context.Context, json.RawMessage) (tool.Result, error) {
	return tool.Result{Content: strings.Repeat("output line\n", 40)}, nil
}

// counting counts write transactions: on SQLite each is one commit, one
// fsync of the WAL.
type counting struct {
	store.Store
	mu     sync.Mutex // guards writes
	writes int
}

func (c *counting) count() {
	c.mu.Lock()
	c.writes++
	c.mu.Unlock()
}

func (c *counting) Append(ctx context.Context, es ...store.Entry) error {
	c.count()
	return c.Store.Append(ctx, es...)
}

func (c *counting) PutMeta(ctx context.Context, m store.Meta) error {
	c.count()
	return c.Store.PutMeta(ctx, m)
}

func (c *counting) PutSummary(ctx context.Context, key, text string) error {
	c.count()
	return c.Store.PutSummary(ctx, key, text)
}

// BenchmarkTurn measures one turn of the loop (model call, durable
// response with intent, tool run, durable result) on real SQLite. A fresh
// session every 50 turns keeps the view from growing without bound.
func BenchmarkTurn(b *testing.B) {
	db, err := sqlite.Open(filepath.Join(b.TempDir(), "sessions.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	st := &counting{Store: db}
	benchTurns(b, st)
	b.ReportMetric(float64(st.writes)/float64(b.N), "fsyncs/turn")
}

// BenchmarkTurnMem is BenchmarkTurn on the in-memory store: the loop's own
// CPU per turn, with no disk under it (target: under 1 ms).
func BenchmarkTurnMem(b *testing.B) {
	st := &counting{Store: mem.New()}
	benchTurns(b, st)
	b.ReportMetric(float64(st.writes)/float64(b.N), "writes/turn")
}

// benchTurns runs b.N turns against st, 50 to a session, and reports the
// CPU time per turn.
func benchTurns(b *testing.B, st store.Store) {
	rt, err := agent.New(agent.Options{Workspace: b.TempDir(), Provider: &instant{}, Store: st, Tools: []tool.Tool{noop{}}})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu := cpuTime()
	for turns := 0; turns < b.N; {
		res := rt.Run(context.Background(), turnSpec(min(50, b.N-turns)), "go", agent.RunOptions{})
		turns += res.Turns
	}
	b.StopTimer()
	reportCPU(b, cpu)
}

func turnSpec(maxTurns int) agent.Spec {
	return agent.Spec{Model: "claude-sonnet-4-6", MaxTurns: maxTurns, Tools: []string{"Noop"}}
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/turn")
}

// BenchmarkTurnMemLong is BenchmarkTurnMem in a session that already holds
// many entries: each turn builds the model's view of the whole session, so
// the loop's cost per turn grows with the session. Every Run resumes a
// fresh copy of the same long session for up to 50 turns (the copy is made
// with the timer stopped), so the history stays within 150 entries of its
// nominal size whatever b.N is.
func BenchmarkTurnMemLong(b *testing.B) {
	for _, history := range []int{1_000, 3_000, 10_000} {
		b.Run(fmt.Sprintf("entries=%d", history), func(b *testing.B) {
			ctx := context.Background()
			st := mem.New()
			rt, err := agent.New(agent.Options{Workspace: b.TempDir(), Provider: &instant{}, Store: st, Tools: []tool.Tool{noop{}}})
			if err != nil {
				b.Fatal(err)
			}
			base := rt.Run(ctx, turnSpec(history/3), "go", agent.RunOptions{}).SessionID
			entries, err := st.Load(ctx, store.SessionKey(rt.Workspace(), base))
			if err != nil {
				b.Fatal(err)
			}
			var cpu time.Duration
			b.ResetTimer()
			for turns, runs := 0, 0; turns < b.N; runs++ {
				b.StopTimer()
				id := fmt.Sprintf("copy-%d", runs)
				copySession(b, st, entries, store.SessionKey(rt.Workspace(), id))
				b.StartTimer()
				start := cpuTime()
				res := rt.Run(ctx, turnSpec(min(50, b.N-turns)), "", agent.RunOptions{Resume: id})
				cpu += cpuTime() - start
				if res.Turns == 0 {
					b.Fatalf("no turn: %s", res.Error)
				}
				turns += res.Turns
			}
			b.StopTimer()
			b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/turn")
		})
	}
}

// copySession appends entries under key with new uuids, chained in order.
func copySession(b *testing.B, st store.Store, entries []store.Entry, key string) {
	out := make([]store.Entry, len(entries))
	for i, e := range entries {
		e.Key, e.Seq, e.UUID, e.Parent = key, 0, fmt.Sprintf("%s#%d", key, i), ""
		if i > 0 {
			e.Parent = out[i-1].UUID
		}
		out[i] = e
	}
	if err := st.Append(context.Background(), out...); err != nil {
		b.Fatal(err)
	}
}
