package hook

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runner(t *testing.T, ev Event, matcher string, cmds ...Command) *Runner {
	t.Helper()
	for i := range cmds {
		cmds[i].Type = "command"
	}
	c := Config{ev: {{Matcher: matcher, Hooks: cmds}}}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	return &Runner{Config: c, Dir: t.TempDir()}
}

// TestExitCodes: exit 0 passes, exit 2 blocks with stderr as the reason,
// another code is a note and does not block (Claude Code's contract).
func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		cmd        string
		block      bool
		reason     string
		permission string
		notes      int
	}{
		{"exit 0", false, "", "", 0},
		{"echo 'not on main' >&2; exit 2", true, "not on main", "deny", 0},
		{"echo oops >&2; exit 1", false, "", "", 1},
		{`echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}}'`, true, "no", "deny", 0},
		{`echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'`, false, "", "allow", 0},
		{`echo '{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check"}}'`, false, "check", "ask", 0},
		{`echo '{"decision": "block", "reason": "legacy"}'`, true, "legacy", "deny", 0},
		{`echo '{"systemMessage": "hello person"}'`, false, "", "", 1},
	} {
		r := runner(t, PreToolUse, "Bash", Command{Command: c.cmd})
		out := r.Run(context.Background(), Input{Event: PreToolUse, ToolName: "Bash"}, "Bash")
		if out.Ran != 1 || out.Block != c.block || out.Reason != c.reason || out.Permission != c.permission || len(out.Notes) != c.notes {
			t.Errorf("%s: %+v", c.cmd, out)
		}
	}
}

// TestInputAndEnv: the hook reads the event's JSON on stdin, runs in the
// project directory, and sees CLAUDE_PROJECT_DIR.
func TestInputAndEnv(t *testing.T) {
	r := runner(t, PreToolUse, "", Command{Command: `cat > in.json; echo "$CLAUDE_PROJECT_DIR" > dir.txt; pwd >> dir.txt`})
	in := Input{SessionID: "s1", Event: PreToolUse, ToolName: "Write", ToolInput: json.RawMessage(`{"file_path":"a"}`), ToolUseID: "t1"}
	r.Run(context.Background(), in, "Write")
	var got map[string]any
	b, err := os.ReadFile(filepath.Join(r.Dir, "in.json"))
	if err != nil || json.Unmarshal(b, &got) != nil {
		t.Fatalf("stdin %q: %v", b, err)
	}
	if got["session_id"] != "s1" || got["hook_event_name"] != "PreToolUse" || got["tool_name"] != "Write" || got["cwd"] != r.Dir || got["tool_use_id"] != "t1" {
		t.Errorf("input %v", got)
	}
	dirs, _ := os.ReadFile(filepath.Join(r.Dir, "dir.txt"))
	if lines := strings.Fields(string(dirs)); len(lines) != 2 || lines[0] != r.Dir || lines[1] != r.Dir {
		t.Errorf("CLAUDE_PROJECT_DIR and pwd: %q, want %s twice", dirs, r.Dir)
	}
}

// TestMatchers: names, alternatives, regexps, * and empty.
func TestMatchers(t *testing.T) {
	for _, c := range []struct {
		matcher, name string
		want          bool
	}{
		{"Bash", "Bash", true}, {"Bash", "BashOutput", false}, {"Edit|Write", "Write", true},
		{"Edit|Write", "Read", false}, {"mcp__github__.*", "mcp__github__issue", true},
		{"Notebook.*", "NotebookEdit", true}, {"*", "Anything", true}, {"", "Read", true},
	} {
		if got := (Group{Matcher: c.matcher}).Matches(c.name); got != c.want {
			t.Errorf("matcher %q on %q: %v", c.matcher, c.name, got)
		}
	}
}

// TestTimeout: a hook past its timeout is killed and is a note, not a
// block.
func TestTimeout(t *testing.T) {
	r := runner(t, PreToolUse, "", Command{Command: "sleep 30; exit 2", Timeout: 0.2})
	out := r.Run(context.Background(), Input{Event: PreToolUse}, "Bash")
	if out.Block || len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "timed out") {
		t.Errorf("%+v", out)
	}
}

// TestContextAndStop: plain stdout of UserPromptSubmit is context;
// continue:false stops.
func TestContextAndStop(t *testing.T) {
	r := runner(t, UserPromptSubmit, "", Command{Command: "echo the branch is main"})
	if out := r.Run(context.Background(), Input{Event: UserPromptSubmit, Prompt: "hi"}, ""); out.Context != "the branch is main" {
		t.Errorf("context %q", out.Context)
	}
	r = runner(t, Stop, "", Command{Command: `echo '{"continue": false, "stopReason": "enough"}'`})
	if out := r.Run(context.Background(), Input{Event: Stop}, ""); !out.Stop || out.StopReason != "enough" {
		t.Errorf("%+v", out)
	}
}
