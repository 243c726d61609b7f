package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
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

// counting counts transactions: each Append is one commit, one fsync.
type counting struct {
	store.Store
	mu      sync.Mutex // guards appends
	appends int
}

func (c *counting) Append(ctx context.Context, es ...store.Entry) error {
	c.mu.Lock()
	c.appends++
	c.mu.Unlock()
	return c.Store.Append(ctx, es...)
}

// BenchmarkTurn measures one turn of the loop (model call, durable
// response with intent, tool run, durable result) on real SQLite. A fresh
// session every 50 turns keeps the view from growing without bound.
func BenchmarkTurn(b *testing.B) {
	dir := b.TempDir()
	db, err := sqlite.Open(filepath.Join(dir, "sessions.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	st := &counting{Store: db}
	rt, err := agent.New(agent.Options{Workspace: dir, Provider: &instant{}, Store: st, Tools: []tool.Tool{noop{}}})
	if err != nil {
		b.Fatal(err)
	}
	spec := agent.Spec{Model: "claude-sonnet-4-6", MaxTurns: 50, Tools: []string{"Noop"}}
	b.ResetTimer()
	turns := 0
	for turns < b.N {
		res := rt.Run(context.Background(), spec, "go", agent.RunOptions{})
		turns += res.Turns
	}
	b.ReportMetric(float64(st.appends)/float64(turns), "fsyncs/turn")
}
