package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/permission"
	"github.com/flower-run/flower/store"
)

// fakeAsker answers permission questions with a fixed answer and counts them.
type fakeAsker struct {
	answer, state string
	mu            sync.Mutex // guards asked
	asked         []string
}

func (a *fakeAsker) AskPermission(_ context.Context, call, q string, opts []string) (string, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, q)
	return a.answer, a.state, nil
}

func rules(t *testing.T, ws string, ask, deny []string) *permission.Rules {
	t.Helper()
	r, err := permission.New(ws, nil, ask, deny)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// writeTwice asks for two Writes in one response, then ends.
func writeTwice() modeltest.Responder {
	return modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{
			call("Write", `{"file_path":".github/a.yml","content":"a"}`),
			call("Write", `{"file_path":".github/b.yml","content":"b"}`)}},
		modeltest.Turn{Text: "done"})
}

// TestDenyRule: a denied call never runs, gets no intent, and its result
// is a denial naming the rule (R9.3).
func TestDenyRule(t *testing.T) {
	f := newFixture(t, writeTwice())
	f.rt = f.runtimeWith(agent.Options{Permissions: rules(t, f.ws, nil, []string{"Write(.github/**)"})})
	res := f.run(agent.Spec{Name: "work"}, "write", agent.RunOptions{})
	if !res.OK {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.ws, ".github", "a.yml")); !os.IsNotExist(err) {
		t.Fatalf("the denied Write ran (stat: %v)", err)
	}
	if got, want := f.kinds(res.SessionID), "user assistant tool_result tool_result assistant"; got != want {
		t.Fatalf("entries = %q, want %q (no intent for a denied call)", got, want)
	}
	for _, e := range f.entries(res.SessionID) {
		if e.Kind == store.KindResult && (!e.Op.Denied || !strings.Contains(e.Op.Content, "deny rule Write(.github/**) in flower.yaml")) {
			t.Fatalf("result %+v, want a denial naming the rule", e.Op)
		}
	}
	if got := f.eventLines(event.Denied); len(got) != 2 {
		t.Fatalf("denied events = %q", got)
	}
}

// TestAskRule: "allow for this run" lets both calls run and asks once;
// each allowed call's intent is durable before it runs.
func TestAskRule(t *testing.T) {
	f := newFixture(t, writeTwice())
	asker := &fakeAsker{answer: "2", state: "answered"}
	f.rt = f.runtimeWith(agent.Options{Permissions: rules(t, f.ws, []string{"Write(.github/**)"}, nil), Asker: asker})
	res := f.run(agent.Spec{Name: "work"}, "write", agent.RunOptions{})
	if !res.OK {
		t.Fatalf("result %+v", res)
	}
	if len(asker.asked) != 1 || !strings.Contains(asker.asked[0], "Write(.github/**)") {
		t.Fatalf("asked %q, want one question naming the rule", asker.asked)
	}
	for _, n := range []string{"a.yml", "b.yml"} {
		if _, err := os.Stat(filepath.Join(f.ws, ".github", n)); err != nil {
			t.Errorf("%s not written: %v", n, err)
		}
	}
	if got, want := f.kinds(res.SessionID), "user assistant op_started tool_result op_started tool_result assistant"; got != want {
		t.Fatalf("entries = %q, want %q", got, want)
	}
}

// TestAskUnattended: with no one to answer, an asked call is denied with
// a note that says so.
func TestAskUnattended(t *testing.T) {
	for _, asker := range []agent.PermissionAsker{nil, &fakeAsker{state: "timeout"}, &fakeAsker{answer: "deny", state: "answered"}} {
		f := newFixture(t, writeTwice())
		f.rt = f.runtimeWith(agent.Options{Permissions: rules(t, f.ws, []string{"Write(.github/**)"}, nil), Asker: asker})
		res := f.run(agent.Spec{Name: "work"}, "write", agent.RunOptions{})
		if _, err := os.Stat(filepath.Join(f.ws, ".github")); !res.OK || !os.IsNotExist(err) {
			t.Fatalf("asker %v: result %+v, .github stat %v", asker, res, err)
		}
		for _, e := range f.entries(res.SessionID) {
			if e.Kind == store.KindResult && (!e.Op.Denied || !strings.Contains(e.Op.Content, "ask rule Write(.github/**)")) {
				t.Fatalf("result %+v", e.Op)
			}
		}
	}
}

// TestSubagentInheritsRules: a subagent's calls meet its step's rules.
func TestSubagentInheritsRules(t *testing.T) {
	f := newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Task", `{"description":"write ci","prompt":"write .github/ci.yml"}`)}},
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Write", `{"file_path":".github/ci.yml","content":"x"}`)}},
		modeltest.Turn{Text: "could not"},
		modeltest.Turn{Text: "done"}))
	f.rt = f.runtimeWith(agent.Options{Permissions: rules(t, f.ws, nil, []string{"Write(.github/**)"})})
	res := f.run(agent.Spec{Name: "work"}, "delegate", agent.RunOptions{})
	if !res.OK {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.ws, ".github", "ci.yml")); !os.IsNotExist(err) {
		t.Fatalf("the subagent's denied Write ran (stat: %v)", err)
	}
	if got := f.eventLines(event.Denied); len(got) != 1 {
		t.Fatalf("denied events = %q, want the subagent's one", got)
	}
}

// TestGrantOutlivesTheProcess: "allow for this run" is kept in the store:
// a new runtime (a new process, after a crash) working for the same run
// does not ask again, one working for another run does (issue 10).
func TestGrantOutlivesTheProcess(t *testing.T) {
	write := func(name string) modeltest.Turn {
		return modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Write", `{"file_path":".github/`+name+`","content":"x"}`)}}
	}
	f := newFixture(t, modeltest.Script(write("a.yml"), modeltest.Turn{Text: "done"},
		write("b.yml"), modeltest.Turn{Text: "done"}, write("c.yml"), modeltest.Turn{Text: "done"}))
	ask := []string{"Write(.github/**)"}
	for i, tt := range []struct {
		run, answer string
		asked       int
	}{
		{run: "r1", answer: "2", asked: 1}, // allow for this run
		{run: "r1", answer: "3", asked: 0}, // the same run after a restart: allowed, not asked
		{run: "r2", answer: "3", asked: 1}, // another run: asked again, and refused
	} {
		asker := &fakeAsker{answer: tt.answer, state: "answered"}
		f.rt = f.runtimeWith(agent.Options{Permissions: rules(t, f.ws, ask, nil), Asker: asker})
		if err := f.rt.SetRun(context.Background(), tt.run); err != nil {
			t.Fatal(err)
		}
		if res := f.run(agent.Spec{Name: "work"}, "write", agent.RunOptions{}); !res.OK {
			t.Fatalf("run %d: result %+v", i, res)
		}
		if len(asker.asked) != tt.asked {
			t.Errorf("run %d (%s): asked %d times %q, want %d", i, tt.run, len(asker.asked), asker.asked, tt.asked)
		}
	}
	for name, want := range map[string]bool{"a.yml": true, "b.yml": true, "c.yml": false} {
		if _, err := os.Stat(filepath.Join(f.ws, ".github", name)); (err == nil) != want {
			t.Errorf("%s written = %v, want %v", name, err == nil, want)
		}
	}
}
