package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
)

// srcTool is a tool a Source offers (as an MCP server's), counting runs.
type srcTool struct {
	name  string
	class tool.Class
	idem  bool
	mu    sync.Mutex // guards runs
	runs  int
}

func (t *srcTool) Name() string            { return t.name }
func (t *srcTool) Description() string     { return "a tool from a source" }
func (t *srcTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (t *srcTool) Class() tool.Class       { return t.class }
func (t *srcTool) Idempotent() bool        { return t.idem }
func (t *srcTool) Run(context.Context, json.RawMessage) (tool.Result, error) {
	t.mu.Lock()
	t.runs++
	t.mu.Unlock()
	return tool.Result{Content: "ran"}, nil
}

// source offers its tools once asked, counting the asks (a lazy start).
type source struct {
	mu    sync.Mutex // guards asked
	asked int
	tools []tool.Tool
}

func (s *source) Tools(context.Context) []tool.Tool {
	s.mu.Lock()
	s.asked++
	s.mu.Unlock()
	return s.tools
}

// TestSourceToolCutByCrash: a source's tool is an ordinary tool for the
// write-ahead path. An idempotent effect cut by a crash runs again even
// under skip; a plain one is skipped (issue 13).
func TestSourceToolCutByCrash(t *testing.T) {
	for _, idem := range []bool{true, false} {
		f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "finished"}))
		tl := &srcTool{name: "mcp__s__put", class: tool.Effect, idem: idem}
		f.rt = f.runtimeWith(agent.Options{Sources: []tool.Source{&source{tools: []tool.Tool{tl}}},
			Policies: resume.Policies{Default: resume.Skip}})
		id := "11111111-2222-3333-4444-777777777777"
		key := store.SessionKey(f.ws, id)
		use := &model.ToolUse{ID: "toolu_p", Name: tl.name, Input: json.RawMessage(`{}`)}
		ctx := context.Background()
		if err := f.rt.Store().Append(ctx,
			store.Entry{UUID: "c1", Key: key, Kind: store.KindUser, Message: &model.Message{Role: model.User, Content: []model.Block{&model.Text{Text: "put"}}}},
			store.Entry{UUID: "c2", Parent: "c1", Key: key, Kind: store.KindAssistant, Message: &model.Message{Role: model.Assistant, Content: []model.Block{use}}},
			store.Entry{UUID: "c3", Parent: "c2", Key: key, Kind: store.KindOpStarted, Op: &store.Op{ID: "toolu_p", Tool: tl.name}}); err != nil {
			t.Fatal(err)
		}
		if err := f.rt.Store().PutMeta(ctx, store.Meta{Key: key}); err != nil {
			t.Fatal(err)
		}
		res := f.run(agent.Spec{Name: "work", Tools: []string{"Read", "mcp__s__*"}}, "", agent.RunOptions{Resume: id})
		want := 0
		if idem {
			want = 1
		}
		if !res.OK || tl.runs != want {
			t.Errorf("idempotent=%v: ran %d times, want %d (%+v)", idem, tl.runs, want, res)
		}
		got := lastUserText(f.srv.Requests()[0])
		if idem != (got == "R:ran;") {
			t.Errorf("idempotent=%v: the model got %q", idem, got)
		}
		if tools := f.srv.Requests()[0].Tools; strings.Join(tools, ",") != "Read,mcp__s__put" {
			t.Errorf("offered %v, want Read and the pattern's tool", tools)
		}
	}
}

// TestSourceNotStartedForStepWithoutMCP: a step whose tool set names no
// mcp__ tool never asks the source (its servers stay unstarted).
func TestSourceNotStartedForStepWithoutMCP(t *testing.T) {
	f := newFixture(t, modeltest.Script(modeltest.Turn{Text: "done"}, modeltest.Turn{Text: "done"}))
	src := &source{tools: []tool.Tool{&srcTool{name: "mcp__s__get", class: tool.Pure}}}
	f.rt = f.runtimeWith(agent.Options{Sources: []tool.Source{src}})
	if res := f.run(agent.Spec{Name: "judge", Tools: []string{"Read"}}, "look", agent.RunOptions{}); !res.OK {
		t.Fatal(res.Error)
	}
	if src.asked != 0 {
		t.Errorf("the source was asked %d times by a step that cannot use it", src.asked)
	}
	if res := f.run(agent.Spec{Name: "work"}, "work", agent.RunOptions{}); !res.OK || src.asked == 0 {
		t.Errorf("a step allowing every tool did not ask the source (%d): %+v", src.asked, res)
	}
	if tools := f.srv.Requests()[1].Tools; !strings.Contains(strings.Join(tools, ","), "mcp__s__get") {
		t.Errorf("offered %v", tools)
	}
}
