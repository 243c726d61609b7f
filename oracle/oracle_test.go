package oracle_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/oracle"
	"github.com/flower-run/flower/store/sqlite"
)

type fixture struct {
	ws, runDir string
	srv        *modeltest.Server
	o          *oracle.Oracle
}

func newFixture(t *testing.T, respond modeltest.Responder) *fixture {
	t.Helper()
	f := &fixture{ws: t.TempDir()}
	f.runDir = filepath.Join(f.ws, "runs")
	f.srv = modeltest.NewAnthropic(respond)
	t.Cleanup(f.srv.Close)
	f.o = oracle.New(oracle.Options{Workspace: f.ws, RunDir: f.runDir, Model: "claude-sonnet-4-6",
		Provider: anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: f.srv.URL})})
	t.Cleanup(func() { f.o.Close() })
	return f
}

func (f *fixture) write(t *testing.T, rel, text string) {
	t.Helper()
	p := filepath.Join(f.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ask(t *testing.T, o *oracle.Oracle, q string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := o.Ask(ctx, q)
	if err != nil {
		t.Fatalf("Ask(%q): %v", q, err)
	}
	return a
}

func TestOracleSeesEventsAndNotesAndOnlyReads(t *testing.T) {
	f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "About half done: the parser works, tests are next."}))
	f.write(t, ".flower/notes/brief.md", "## Goal\nA markdown to html script.\n")
	f.write(t, ".flower/notes/goals.md", "- [ ] converts headings\n")
	f.write(t, ".flower/notes/archive/old/brief.md", "ARCHIVED")
	for i := 1; i <= 70; i++ {
		f.o.Observe(event.Event{Kind: event.Text, Text: fmt.Sprintf("event number %d.", i),
			Payload: map[string]any{"step": "work"}})
		f.o.Observe(event.Event{Kind: event.Usage, Text: "usage noise"})
	}
	f.o.Observe(event.Event{Kind: event.ToolCall, Tool: "Write", Text: "md2html.py"})

	got := ask(t, f.o, "  how far along are you?  ")
	if got != "About half done: the parser works, tests are next." {
		t.Errorf("answer %q", got)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	tools := slices.Sorted(slices.Values(r.Tools))
	if !slices.Equal(tools, []string{"Glob", "Grep", "Read"}) {
		t.Errorf("tools offered %v; want only Read, Glob, Grep", r.Tools)
	}
	if !strings.Contains(r.System, "oracle") {
		t.Errorf("system prompt is not the oracle's: %q", r.System)
	}
	prompt := r.Messages[0].TextOf()
	for _, want := range []string{"how far along are you?", "[work] text: event number 70.",
		"tool_call: [Write] md2html.py", "A markdown to html script.", "converts headings", "60 of them"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	for _, not := range []string{"event number 11.", "usage noise", "ARCHIVED"} {
		if strings.Contains(prompt, not) {
			t.Errorf("prompt has %q; only the last 60 events, no usage, no archive", not)
		}
	}
}

// The oracle's sessions live in <run dir>/aside: the main store and the
// manifest never see them.
func TestOracleKeepsToItsOwnStore(t *testing.T) {
	f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "fine"}))
	ask(t, f.o, "status?")
	if _, err := os.Stat(filepath.Join(f.runDir, "aside", "sessions.db")); err != nil {
		t.Errorf("no aside store: %v", err)
	}
	for _, name := range []string{"sessions.db", "manifest.json", "lineage.json"} {
		if _, err := os.Stat(filepath.Join(f.runDir, name)); err == nil {
			t.Errorf("the oracle created %s in the main run dir", name)
		}
	}
	if err := f.o.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(f.runDir, "aside", "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := f.o.Ask(context.Background(), "again?"); err != oracle.ErrClosed {
		t.Errorf("Ask after Close: %v, want ErrClosed", err)
	}
}

func TestOracleCannotWrite(t *testing.T) {
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{{Name: "Write", Input: `{"file_path":"x.txt","content":"no"}`}}},
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{{Name: "Bash", Input: `{"command":"touch y.txt"}`}}},
		modeltest.Turn{Text: "I can only read."}))
	if got := ask(t, f.o, "write x.txt please"); got != "I can only read." {
		t.Errorf("answer %q", got)
	}
	for _, name := range []string{"x.txt", "y.txt"} {
		if _, err := os.Stat(filepath.Join(f.ws, name)); err == nil {
			t.Errorf("the oracle created %s", name)
		}
	}
	reqs := f.srv.Requests()
	last := reqs[len(reqs)-1].Messages
	var denial string
	for _, b := range last[len(last)-1].Content {
		if r, ok := b.(*model.ToolResult); ok {
			denial = r.Content
		}
	}
	if !strings.Contains(denial, "not allowed") {
		t.Errorf("the denied call's result does not say so: %q", denial)
	}
}

func TestOracleStopsAfterTwelveTurns(t *testing.T) {
	f := newFixture(t, func(*modeltest.Request) modeltest.Turn {
		return modeltest.Turn{Text: "still looking", ToolCalls: []modeltest.ToolCall{{Name: "Glob", Input: `{"pattern":"*"}`}}}
	})
	f.o.Ask(context.Background(), "look forever")
	if n := f.srv.Count(); n != oracle.MaxTurns {
		t.Errorf("%d model calls, want %d", n, oracle.MaxTurns)
	}
}

func TestOracleRefusesAnEmptyQuestion(t *testing.T) {
	f := newFixture(t, modeltest.Script())
	if _, err := f.o.Ask(context.Background(), "  "); err == nil {
		t.Error("empty question answered")
	}
	if f.srv.Count() != 0 {
		t.Error("the model was called")
	}
}
