package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/view"
)

// realistic is a session shaped as the agent loop writes it: a prompt now
// and then, and turns of an assistant response (reasoning, a sentence, one
// to three tool calls), the write-ahead intents of its side-effecting calls
// and one result per call. Tool results are log-uniform between 100 B and
// 8 KB of code-like text with the characters JSON must escape. The same n
// and seed give the same entries.
func realistic(key string, n int, seed uint64) []store.Entry {
	g := &sessionGen{key: key, r: rand.New(rand.NewPCG(seed, 1))}
	for len(g.out) < n {
		if len(g.out)%200 == 0 {
			g.add(store.Entry{Kind: store.KindUser, Message: &model.Message{Role: model.User,
				Content: []model.Block{&model.Text{Text: g.text(50, 600)}}}})
		}
		g.turn()
	}
	return g.out[:n]
}

type sessionGen struct {
	key   string
	r     *rand.Rand
	out   []store.Entry
	calls int
}

var toolNames = []struct {
	name   string
	effect bool
}{{"Read", false}, {"Grep", false}, {"Glob", false}, {"Edit", true}, {"Write", true}, {"Bash", true}}

func (g *sessionGen) add(e store.Entry) {
	n := len(g.out)
	e.UUID = fmt.Sprintf("%s#%d", g.key, n)
	if n > 0 {
		e.Parent = g.out[n-1].UUID
	}
	e.Key = g.key
	e.Time = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * 1500 * time.Millisecond)
	g.out = append(g.out, e)
}

func (g *sessionGen) turn() {
	msg := &model.Message{Role: model.Assistant}
	if g.r.IntN(3) > 0 {
		msg.Content = append(msg.Content, &model.Thinking{Thinking: g.text(100, 1500), Signature: strings.Repeat("RXVn", 40+g.r.IntN(60))})
	}
	msg.Content = append(msg.Content, &model.Text{Text: g.text(40, 300)})
	var intents []store.Entry
	for range 1 + g.r.IntN(3) {
		g.calls++
		t := toolNames[g.r.IntN(len(toolNames))]
		u := &model.ToolUse{ID: fmt.Sprintf("toolu_01%022d", g.calls), Name: t.name, Input: g.input(t.name)}
		msg.Content = append(msg.Content, u)
		if t.effect {
			intents = append(intents, store.Entry{Kind: store.KindOpStarted,
				Op: &store.Op{ID: u.ID, Tool: u.Name, Input: u.Input, Class: "effect"}})
		}
	}
	g.add(store.Entry{Kind: store.KindAssistant, Message: msg, Model: "claude-sonnet-4-6", StopReason: model.StopToolUse,
		Usage: &model.Usage{Input: 3, Output: 200 + g.r.IntN(800), CacheRead: 20000 + 40*len(g.out)}, Cost: 0.01 + g.r.Float64()/50})
	for _, e := range intents {
		g.add(e)
	}
	for _, u := range msg.ToolUses() {
		op := &store.Op{ID: u.ID, Tool: u.Name, Content: g.result(), IsError: g.r.IntN(20) == 0}
		if g.r.IntN(2) == 0 {
			op.Class = "pure"
		}
		g.add(store.Entry{Kind: store.KindResult, Op: op})
	}
}

// input is a call's input, shaped as the built-in tool takes it.
func (g *sessionGen) input(tool string) json.RawMessage {
	const path = "/home/me/proj/internal/render/html.go"
	var v map[string]string
	switch tool {
	case "Read":
		v = map[string]string{"file_path": path}
	case "Grep":
		v = map[string]string{"pattern": `func \(r \*Renderer\) \w+`, "path": "/home/me/proj", "glob": "*.go"}
	case "Glob":
		v = map[string]string{"pattern": "internal/**/*_test.go"}
	case "Edit":
		v = map[string]string{"file_path": path, "old_string": g.text(40, 600), "new_string": g.text(40, 800)}
	case "Write":
		v = map[string]string{"file_path": path, "content": g.text(200, 4000)}
	case "Bash":
		v = map[string]string{"command": "go test -race ./internal/render/... 2>&1 | tail -40", "description": "Run the render tests"}
	}
	data, _ := json.Marshal(v)
	return data
}

// result is a tool's output: log-uniform in size between 100 B and 8 KB.
func (g *sessionGen) result() string {
	size := int(100 * math.Pow(80, g.r.Float64()))
	return g.text(size, size)
}

// text is code-like text of min to max bytes: tabs, newlines, quotes,
// backslashes and now and then a non-ASCII rune.
func (g *sessionGen) text(min, max int) string {
	const lines = "\tif err := r.Render(w, \"page\"); err != nil {\n\t\treturn fmt.Errorf(\"render %s: %w\", name, err)\n\t}\n" +
		"// The café's «menu» is read from C:\\menus\\today.txt — 3 items.\n" +
		"ok  \tgithub.com/flower-run/flower/store\t0.412s\n"
	size := min + g.r.IntN(max-min+1)
	var b strings.Builder
	for b.Len() < size {
		i := g.r.IntN(len(lines) - 40)
		b.WriteString(lines[i : i+40])
	}
	return strings.ToValidUTF8(b.String()[:size], "?")
}

// BenchmarkLoadAndView10k is what starting or resuming a long session
// pays before its first model call: Load a realistic 10,000-entry session
// and build the model's view of it (target: under 50 ms).
func BenchmarkLoadAndView10k(b *testing.B) {
	const total, key = 10_000, "-home-me-proj/s"
	entries := realistic(key, total, 1)
	db := benchStore(b)
	for i := 0; i < total; i += 500 {
		appendAll(b, db, entries[i:min(i+500, total)]...)
	}
	ctx := context.Background()
	var msgs []model.Message
	var loading, building time.Duration // wall time of each half
	cpu := cpuTime()
	for b.Loop() {
		start := time.Now()
		got, err := db.Load(ctx, key)
		if err != nil || len(got) != total {
			b.Fatalf("Load: %d entries, %v", len(got), err)
		}
		loaded := time.Now()
		msgs = view.Build(got)
		loading, building = loading+loaded.Sub(start), building+time.Since(loaded)
	}
	if err := view.Check(msgs); err != nil {
		b.Fatalf("view: %v", err)
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(loading)/float64(time.Millisecond)/float64(b.N), "load-ms/op")
	b.ReportMetric(float64(building)/float64(time.Millisecond)/float64(b.N), "view-ms/op")
	entrySize(b, db)
	b.ReportMetric(float64(len(msgs)), "msgs")
}

// BenchmarkScan10k reads the rows of the same session without decoding
// them: the floor under Load that SQLite and database/sql set.
func BenchmarkScan10k(b *testing.B) {
	const total, key = 10_000, "-home-me-proj/s"
	entries := realistic(key, total, 1)
	db := benchStore(b)
	for i := 0; i < total; i += 500 {
		appendAll(b, db, entries[i:min(i+500, total)]...)
	}
	raw := sqlite.RawDB(db)
	ctx := context.Background()
	cpu := cpuTime()
	for b.Loop() {
		rows, err := raw.QueryContext(ctx, `SELECT seq, CAST(body AS TEXT) FROM entries WHERE key = ? ORDER BY seq`, key)
		if err != nil {
			b.Fatal(err)
		}
		n, size := 0, 0
		for rows.Next() {
			var seq int64
			var body string
			if err := rows.Scan(&seq, &body); err != nil {
				b.Fatal(err)
			}
			n++
			size += len(body)
		}
		if err := rows.Close(); err != nil || n != total {
			b.Fatalf("scan: %d rows, %v", n, err)
		}
		b.ReportMetric(float64(size)/total, "B/row")
	}
	reportCPU(b, cpu)
}
