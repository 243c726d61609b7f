package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/mem"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/tool"
)

// syncCounter counts the store's write transactions, Commit included: on
// SQLite each is one fsync'd commit of the WAL.
type syncCounter struct {
	store.Store
	mu     sync.Mutex // guards writes
	writes int
}

func (c *syncCounter) add() {
	c.mu.Lock()
	c.writes++
	c.mu.Unlock()
}

func (c *syncCounter) n() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

func (c *syncCounter) Commit(ctx context.Context, b store.Batch) error {
	c.add()
	return c.Store.Commit(ctx, b)
}

func (c *syncCounter) Append(ctx context.Context, es ...store.Entry) error {
	c.add()
	return c.Store.Append(ctx, es...)
}

func (c *syncCounter) PutMeta(ctx context.Context, m store.Meta) error {
	c.add()
	return c.Store.PutMeta(ctx, m)
}

func (c *syncCounter) PutSummary(ctx context.Context, key, text string) error {
	c.add()
	return c.Store.PutSummary(ctx, key, text)
}

// realistic is a tool whose results are 200 B to 20 KB, drawn from a fixed
// seed, like Read and Bash output: Look is pure, Poke an effect.
type realistic struct {
	name  string
	class tool.Class
	mu    sync.Mutex // guards rng
	rng   *rand.Rand
}

func newRealistic(name string, class tool.Class) *realistic {
	return &realistic{name: name, class: class, rng: rand.New(rand.NewSource(12))}
}

func (r *realistic) Name() string            { return r.name }
func (r *realistic) Description() string     { return "returns a result of realistic size" }
func (r *realistic) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (r *realistic) Class() tool.Class       { return r.class }
func (r *realistic) Run(context.Context, json.RawMessage) (tool.Result, error) {
	r.mu.Lock()
	n := 200 + r.rng.Intn(20_000-200)
	r.mu.Unlock()
	line := "func example() { return fmt.Sprintf(\"%d\", 42) } // a line of source\n"
	return tool.Result{Content: strings.Repeat(line, n/len(line)+1)[:n]}, nil
}

// kept is a pure tool whose results are durable at once, like ask.
type kept struct{ *realistic }

func (kept) KeepResult() bool { return true }

// oneTurn is a provider whose first response makes the calls of pattern
// (P a pure Look, E an effect Poke, K a pure Keep that keeps its results),
// in order, and whose second ends the turn.
type oneTurn struct {
	pattern string
	n       int
	commits func() int // the store's commits so far, if counted
	marks   []int      // commits at each model call
}

func (p *oneTurn) Stream(_ context.Context, req *model.Request, _ func(model.Delta)) (*model.Response, error) {
	p.n++
	if p.commits != nil {
		p.marks = append(p.marks, p.commits())
	}
	msg := model.Message{Role: model.Assistant, Content: []model.Block{&model.Text{Text: "working"}}}
	stop := model.StopEnd
	if p.n == 1 && p.pattern != "" {
		stop = model.StopToolUse
		for i, c := range p.pattern {
			name := map[rune]string{'P': "Look", 'E': "Poke", 'K': "Keep"}[c]
			msg.Content = append(msg.Content, &model.ToolUse{ID: fmt.Sprintf("toolu_%d", i), Name: name, Input: json.RawMessage(`{}`)})
		}
	}
	return &model.Response{ID: "msg", Model: req.Model, StopReason: stop,
		Usage: model.Usage{Input: 1000, Output: 50}, Message: msg}, nil
}

// commitsOfToolTurn runs one prompt whose first response makes the calls
// of pattern, and returns the commits of that tool turn, between the two
// model calls: the response, its intents and its results.
func commitsOfToolTurn(tb testing.TB, st store.Store, ws, pattern string) int {
	tb.Helper()
	c := &syncCounter{Store: st}
	p := &oneTurn{pattern: pattern, commits: c.n}
	rt, err := agent.New(agent.Options{Workspace: ws, Provider: p, Store: c,
		Tools: []tool.Tool{newRealistic("Look", tool.Pure), newRealistic("Poke", tool.Effect), kept{newRealistic("Keep", tool.Pure)}}})
	if err != nil {
		tb.Fatal(err)
	}
	res := rt.Run(context.Background(), agent.Spec{Model: "claude-sonnet-4-6", Tools: []string{"Look", "Poke", "Keep"}}, "go", agent.RunOptions{})
	if !res.OK || res.Turns != 2 {
		tb.Fatalf("run: %+v", res)
	}
	// The prompt's commit may still be under way at the first call (it
	// overlaps it, agent/overlap.go); by the second it is done, and it is
	// the session's only commit before the response's.
	return p.marks[1] - 1
}

// commitsOfRun is the commits of one run of a prompt that ends the turn at
// once: its metadata, prompt and response.
func commitsOfRun(tb testing.TB, st store.Store, ws string) int {
	tb.Helper()
	c := &syncCounter{Store: st}
	rt, err := agent.New(agent.Options{Workspace: ws, Provider: &oneTurn{}, Store: c})
	if err != nil {
		tb.Fatal(err)
	}
	if res := rt.Run(context.Background(), agent.Spec{Model: "claude-sonnet-4-6"}, "hi", agent.RunOptions{}); !res.OK {
		tb.Fatalf("run: %+v", res)
	}
	return c.n()
}

// turnPatterns are the tool turns measured: 1, 3 and 10 calls, pure,
// effect and mixed (alternating, a pure call first).
func turnPatterns() []string {
	var ps []string
	for _, k := range []int{1, 3, 10} {
		ps = append(ps, strings.Repeat("P", k), strings.Repeat("E", k))
		if k > 1 {
			ps = append(ps, strings.Repeat("PE", k)[:k])
		}
	}
	return ps
}

// BenchmarkFsyncsPerTurn measures one tool turn on real SQLite, for each
// pattern of calls, reporting commits (one fsync each on SQLite) per tool turn.
func BenchmarkFsyncsPerTurn(b *testing.B) {
	for _, p := range turnPatterns() {
		b.Run("calls="+p, func(b *testing.B) {
			ws := b.TempDir()
			db, err := sqlite.Open(filepath.Join(ws, "runs", "sessions.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			commits := 0
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				commits += commitsOfToolTurn(b, db, ws, p)
			}
			b.ReportMetric(float64(commits)/float64(b.N), "commits/turn")
		})
	}
	b.Run("new-session", func(b *testing.B) {
		ws := b.TempDir()
		db, err := sqlite.Open(filepath.Join(ws, "runs", "sessions.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		commits := 0
		for i := 0; i < b.N; i++ {
			commits += commitsOfRun(b, db, ws)
		}
		b.ReportMetric(float64(commits)/float64(b.N), "commits/run")
	})
}

// wakeSession stores a session of n tool turns with results of realistic
// size (200 B to 20 KB, fixed seed) under id, in a new SQLite store of ws.
func wakeSession(b *testing.B, ws, id string, n int) *sqlite.DB {
	b.Helper()
	db, err := sqlite.Open(filepath.Join(ws, "runs", "sessions.db"))
	if err != nil {
		b.Fatal(err)
	}
	key := store.SessionKey(ws, id)
	look := newRealistic("Look", tool.Pure)
	es := []store.Entry{{Kind: store.KindUser, Message: &model.Message{Role: model.User,
		Content: []model.Block{&model.Text{Text: "read the code"}}}}}
	for i := 0; i < n; i++ {
		tid := fmt.Sprintf("toolu_%d", i)
		res, _ := look.Run(context.Background(), nil)
		es = append(es,
			store.Entry{Kind: store.KindAssistant, Message: &model.Message{Role: model.Assistant,
				Content: []model.Block{&model.ToolUse{ID: tid, Name: "Look", Input: json.RawMessage(`{}`)}}}},
			store.Entry{Kind: store.KindResult, Op: &store.Op{ID: tid, Tool: "Look", Class: "pure", Content: res.Content}})
	}
	parent := ""
	for i := range es {
		es[i].UUID, es[i].Key, es[i].Parent = fmt.Sprintf("%s#%d", key, i), key, parent
		parent = es[i].UUID
	}
	if err := db.Append(context.Background(), es...); err != nil {
		b.Fatal(err)
	}
	if err := db.PutMeta(context.Background(), store.Meta{Key: key}); err != nil {
		b.Fatal(err)
	}
	return db
}

// BenchmarkFirstWake measures the first wake after a crash of a session of
// 400 tool turns: no spill file exists yet, so every trimmed result is
// written to .flower/results. The setup sub-benchmark only builds the
// session: strace -c of wake minus setup is the wake's fsyncs.
func BenchmarkFirstWake(b *testing.B) {
	const turns = 400
	b.Run("setup", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			wakeSession(b, b.TempDir(), "sess", turns).Close()
		}
	})
	b.Run("wake", func(b *testing.B) { benchWake(b, turns, true) })
	b.Run("rewake", func(b *testing.B) { benchWake(b, turns, false) })
}

// benchWake resumes a session of turns tool turns in a new runtime (a new
// process) b.N times; first removes the spill files before each, as after
// a crash, else they exist from the wake before.
func benchWake(b *testing.B, turns int, first bool) {
	ws := b.TempDir()
	db := wakeSession(b, ws, "sess", turns)
	defer db.Close()
	if !first {
		wake(b, db, ws) // the spill files exist before the first timed wake
	}
	spilled := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if first {
			if err := os.RemoveAll(filepath.Join(ws, ".flower")); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		wake(b, db, ws)
		b.StopTimer()
		files, _ := filepath.Glob(filepath.Join(ws, ".flower", "results", "*.txt"))
		spilled += len(files)
		b.StartTimer()
	}
	b.ReportMetric(float64(spilled)/float64(b.N), "spilled/wake")
}

// wake resumes session sess of ws with a prompt, in a new runtime.
func wake(b *testing.B, db store.Store, ws string) {
	rt, err := agent.New(agent.Options{Workspace: ws, Provider: &oneTurn{}, Store: db, Trim: true,
		Tools: []tool.Tool{newRealistic("Look", tool.Pure)}})
	if err != nil {
		b.Fatal(err)
	}
	res := rt.Run(context.Background(), agent.Spec{Model: "claude-sonnet-4-6", Tools: []string{"Look"}}, "go on", agent.RunOptions{Resume: "sess"})
	if !res.OK {
		b.Fatalf("wake: %+v", res)
	}
}

// TestCommitsPerTurn: an effect's result is durable before the next call
// runs; the results of pure calls ride along with the next commit, at the
// latest one at the end of the turn (issue 12). A tool turn costs the
// response, one commit per effect, and one for pure results made after the
// last effect.
func TestCommitsPerTurn(t *testing.T) {
	for _, tc := range []struct {
		calls string
		want  int
	}{
		{"P", 1}, {"E", 2},
		{"PPP", 1}, {"EEE", 4}, {"PEP", 2}, {"PPE", 2},
		{strings.Repeat("P", 10), 1}, {strings.Repeat("E", 10), 11}, {strings.Repeat("PE", 5), 6},
		{"K", 2}, {"PKP", 2}, // a kept result commits at once, with those held before it
	} {
		t.Run(tc.calls, func(t *testing.T) {
			if got := commitsOfToolTurn(t, mem.New(), t.TempDir(), tc.calls); got != tc.want {
				t.Errorf("commits = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestNewSessionMetaCommitsWithItsPrompt: a new session's metadata is in
// its prompt's commit, not a commit of its own (issue 12).
func TestNewSessionMetaCommitsWithItsPrompt(t *testing.T) {
	st, ws := mem.New(), t.TempDir()
	if got := commitsOfRun(t, st, ws); got != 2 {
		t.Errorf("a one-response run made %d commits, want 2 (prompt with meta, response)", got)
	}
	metas, err := st.Sessions(context.Background(), store.ProjectKey(ws))
	if err != nil || len(metas) != 1 || metas[0].Model != "claude-sonnet-4-6" {
		t.Fatalf("sessions = %+v, %v", metas, err)
	}
}
