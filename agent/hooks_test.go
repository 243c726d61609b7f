package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/hook"
	"github.com/flower-run/flower/store"
)

// hooks is a runner of one command per event, matching every name.
func hooks(ws string, cmds map[hook.Event]string) *hook.Runner {
	c := hook.Config{}
	for ev, cmd := range cmds {
		c[ev] = []hook.Group{{Hooks: []hook.Command{{Type: "command", Command: cmd}}}}
	}
	return &hook.Runner{Config: c, Dir: ws}
}

func lines(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile(name)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestHookDecisions (issue 21): a hook's allow lets an asked call run
// without asking; a deny rule wins over it without running the hook; a
// hook's ask asks about an allowed call, and the Notification hook runs
// while the question waits. Each decision is a hook_decision entry before
// its call's result.
func TestHookDecisions(t *testing.T) {
	allow := `echo x >> pre.log; echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'`
	ask := `echo x >> pre.log; echo '{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check"}}'`
	for _, c := range []struct {
		name, pre    string
		ask, deny    []string
		asked, wrote bool
		preRuns      int
		kinds        string
	}{
		{"allow beats ask", allow, []string{"Write(.github/**)"}, nil, false, true, 2,
			"user assistant hook_decision op_started tool_result hook_decision op_started tool_result assistant"},
		{"deny beats allow", allow, nil, []string{"Write(.github/**)"}, false, false, 0,
			"user assistant tool_result tool_result assistant"},
		{"ask on allowed", ask, nil, nil, true, false, 2,
			"user assistant op_started op_started hook_decision tool_result hook_decision tool_result assistant"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, writeTwice())
			asker := &fakeAsker{answer: "deny", state: "answered"}
			h := hooks(f.ws, map[hook.Event]string{hook.PreToolUse: c.pre, hook.Notification: "cat >> notify.log; echo >> notify.log"})
			f.rt = f.runtimeWith(agent.Options{Permissions: rules(t, f.ws, c.ask, c.deny), Asker: asker, Hooks: h})
			res := f.run(agent.Spec{Name: "work"}, "write", agent.RunOptions{})
			if !res.OK {
				t.Fatalf("result %+v", res)
			}
			if got := len(asker.asked) > 0; got != c.asked {
				t.Errorf("asked %q, want asked=%v", asker.asked, c.asked)
			}
			if n := lines(t, filepath.Join(f.ws, "notify.log")); (n > 0) != c.asked {
				t.Errorf("Notification hook ran %d times, asked=%v", n, c.asked)
			}
			if _, err := os.Stat(filepath.Join(f.ws, ".github", "a.yml")); (err == nil) != c.wrote {
				t.Errorf("a.yml written: %v, want %v", err == nil, c.wrote)
			}
			if n := lines(t, filepath.Join(f.ws, "pre.log")); n != c.preRuns {
				t.Errorf("PreToolUse ran %d times, want %d", n, c.preRuns)
			}
			if got := f.kinds(res.SessionID); got != c.kinds {
				t.Errorf("entries %q\nwant    %q", got, c.kinds)
			}
			for _, e := range f.entries(res.SessionID) {
				if e.Kind == store.KindHook && (e.Op == nil || e.Op.ID == "") {
					t.Errorf("hook decision without its call: %+v", e)
				}
			}
		})
	}
}

// TestHookAskGrantIsPerCall: "allow for this run" answered to a hook's ask
// allows that exact call again, not every call a hook asks about: the
// second, different Write is asked too (issue 21).
func TestHookAskGrantIsPerCall(t *testing.T) {
	ask := `echo '{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check"}}'`
	f := newFixture(t, writeTwice())
	asker := &fakeAsker{answer: "allow for this run", state: "answered"}
	f.rt = f.runtimeWith(agent.Options{Permissions: rules(t, f.ws, nil, nil), Asker: asker,
		Hooks: hooks(f.ws, map[hook.Event]string{hook.PreToolUse: ask})})
	res := f.run(agent.Spec{Name: "work"}, "write", agent.RunOptions{})
	if !res.OK {
		t.Fatalf("result %+v", res)
	}
	if len(asker.asked) != 2 {
		t.Errorf("asked %d times (%q): want each of the two different calls asked", len(asker.asked), asker.asked)
	}
}
