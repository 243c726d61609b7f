//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
)

// Issue 21 items 1 and 4, as a Claude Code user runs them: a project's
// .claude/settings.json alone, through the real binary, against the fake
// Anthropic API.

// writeClaudeSettings writes dir/.claude/settings.json.
func writeClaudeSettings(t *testing.T, dir, text string) string {
	t.Helper()
	p := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, p, text)
	return p
}

// TestClaudeSettingsDenyRm: with only .claude/settings.json denying
// Bash(rm:*), the model's rm -f keep.txt is denied, naming the rule and
// the file, and keep.txt stays (R9.3).
func TestClaudeSettingsDenyRm(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	settings := writeClaudeSettings(t, dir, `{"permissions": {"deny": ["Bash(rm:*)"]}}`)
	writeTestFile(t, filepath.Join(dir, "keep.txt"), "keep\n")
	srv, env := fakeModelWith(t, oneCall("Bash", `{"command":"rm -f keep.txt"}`))
	if r := runFlower(t, dir, env, "once", "clean up"); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "keep.txt")); err != nil {
		t.Errorf("keep.txt is gone: %v", err)
	}
	reqs := srv.Requests()
	res := toolResults(reqs[len(reqs)-1])
	if len(res) != 1 {
		t.Fatalf("tool results %q, want 1", res)
	}
	real, _ := filepath.EvalSymlinks(settings)
	wantIn(t, "rm", res[0], "Permission denied", "deny rule Bash(rm:*) in ")
	if !strings.Contains(res[0], settings) && !strings.Contains(res[0], real) {
		t.Errorf("the denial %q does not name %s", res[0], settings)
	}
}

// hookSettings is a settings file with one PreToolUse hook on Bash that
// appends its stdin to hook.log, then runs then.
func hookSettings(then string) string {
	cmd := `{ cat; echo; } >> "$CLAUDE_PROJECT_DIR/hook.log"; ` + then
	b, _ := json.Marshal(cmd)
	return `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": ` + string(b) + `}]}]}}`
}

// TestPreToolUseHookBlocks: a PreToolUse hook that exits 2 blocks the
// Bash call, and its stderr is in the next request the model gets; the
// hook read Claude Code's JSON on stdin.
func TestPreToolUseHookBlocks(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("hooks run in the sandbox helper, Linux's")
	}
	dir := t.TempDir()
	writeClaudeSettings(t, dir, hookSettings(`echo "no writes to ran.txt, use the notes" >&2; exit 2`))
	srv, env := fakeModelWith(t, oneCall("Bash", `{"command":"echo ran > ran.txt"}`))
	if r := runFlower(t, dir, env, "once", "write it"); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); !os.IsNotExist(err) {
		t.Errorf("the blocked call ran (stat ran.txt: %v)", err)
	}
	reqs := srv.Requests()
	res := toolResults(reqs[len(reqs)-1])
	if len(res) != 1 {
		t.Fatalf("tool results %q", res)
	}
	wantIn(t, "blocked", res[0], "PreToolUse hook", "no writes to ran.txt, use the notes")
	lines := readHookLog(t, dir)
	if len(lines) != 1 {
		t.Fatalf("the hook ran %d times, want 1", len(lines))
	}
	in := lines[0]
	if in["hook_event_name"] != "PreToolUse" || in["tool_name"] != "Bash" || in["session_id"] == "" || in["cwd"] == "" {
		t.Errorf("hook input %v", in)
	}
	if ti, _ := in["tool_input"].(map[string]any); ti["command"] != "echo ran > ran.txt" {
		t.Errorf("tool_input %v", in["tool_input"])
	}
}

func readHookLog(t *testing.T, dir string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "hook.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("hook.log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestPreToolUseHookDurable: flower is SIGKILLed (failpoint after-effect)
// during a call its hook gated, then resumed: the hook's decision was
// recorded before the call ran, so the hook is not run again for it. An
// allowed call is ambiguous and retried (its effect twice, as resume
// policy retry says), a blocked one is answered as blocked and never runs.
func TestPreToolUseHookDurable(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("hooks run in the sandbox helper, Linux's")
	}
	for _, c := range []struct {
		name, then string
		effects    int
		got        string
	}{
		{"allowed", "exit 0", 2, "got: (no output)"},
		{"blocked", "echo blocked by policy >&2; exit 2", 0, "blocked by policy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeClaudeSettings(t, dir, hookSettings(c.then))
			srv, env := fakeModelWith(t, oneCall("Bash", `{"command":"echo x >> effects"}`))
			if r := runFlower(t, dir, append(env, "FLOWER_FAILPOINT=after-effect:1"), "once", "append"); r.code == 0 {
				t.Fatalf("the failpoint did not kill flower\n%s%s", r.stdout, r.stderr)
			}
			if n := len(readHookLog(t, dir)); n != 1 {
				t.Fatalf("before the wake the hook ran %d times, want 1", n)
			}
			r := runFlower(t, dir, env, "once", "--resume", onlySession(t, dir))
			if r.code != 0 {
				t.Fatalf("resume: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if n := len(readHookLog(t, dir)); n != 1 {
				t.Errorf("after the wake the hook ran %d times, want 1 (its decision is durable)", n)
			}
			if n := len(readLines(t, filepath.Join(dir, "effects"))); n != c.effects {
				t.Errorf("the call ran %d times, want %d", n, c.effects)
			}
			reqs := srv.Requests()
			if last := reqs[len(reqs)-1]; !strings.Contains(strings.Join(toolResults(last), "\n"), strings.TrimPrefix(c.got, "got: ")) {
				t.Errorf("the model got %q, want %q", toolResults(last), c.got)
			}
		})
	}
}

// TestStatusListsFilesRead: flower status names, a line each, the
// configuration files a run reads, and a bad settings file with its error
// (issue 21 item 5).
func TestStatusListsFilesRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeClaudeSettings(t, dir, `{"permissions": {"deny": ["Bash(rm:*)"]}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}`)
	writeTestFile(t, filepath.Join(dir, ".claude", "settings.local.json"), `{"permissions": {"deny": ["Bash(rm:*"]}}`)
	writeTestFile(t, filepath.Join(dir, "flower.yaml"), "max_turns: 3\n")
	writeTestFile(t, filepath.Join(dir, "AGENTS.md"), "see @docs/more.md\n")
	writeTestFile(t, filepath.Join(dir, "CLAUDE.md"), "rules\n")
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "docs", "more.md"), "more\n")
	r := runFlower(t, dir, nil, "status")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"config     ~/flower.yaml (settings)",
		"config     ~/.claude/settings.json (Claude Code settings: 1 rules, 1 hooks, 0 env)",
		"config     ~/.claude/settings.local.json (error, runs refuse to start: ",
		"config     ~/AGENTS.md (instructions)",
		"config     ~/CLAUDE.md (instructions)",
		"config     ~/docs/more.md (instructions, imported by ",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestPromptAndStopHooks: a UserPromptSubmit hook's stdout reaches the
// model with the prompt; a Stop hook that exits 2 once keeps the model
// going with its stderr, then lets it stop (stop_hook_active is true the
// second time).
func TestPromptAndStopHooks(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("hooks run in the sandbox helper, Linux's")
	}
	dir := t.TempDir()
	stop := `{ cat; echo; } >> stop.log; if [ ! -e stopped ]; then touch stopped; echo "run the tests first" >&2; exit 2; fi`
	b, _ := json.Marshal(stop)
	writeClaudeSettings(t, dir, `{"hooks": {
		"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo PROMPT-CONTEXT: branch main"}]}],
		"Stop": [{"hooks": [{"type": "command", "command": `+string(b)+`}]}]}}`)
	srv, env := fakeModelWith(t, modeltest.Script(modeltest.Turn{Text: "done"}, modeltest.Turn{Text: "tests pass, done"}))
	r := runFlower(t, dir, env, "once", "do it")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (the Stop hook kept the model going once)", len(reqs))
	}
	if first := reqs[0].Messages[0].TextOf(); !strings.Contains(first, "PROMPT-CONTEXT: branch main") {
		t.Errorf("the first request lacks the UserPromptSubmit context: %s", first)
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if got := last.TextOf(); !strings.Contains(got, "run the tests first") {
		t.Errorf("the second request's last message %s lacks the Stop hook's reason", got)
	}
	lines := strings.Split(strings.TrimSpace(readTestFile(t, filepath.Join(dir, "stop.log"))), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"stop_hook_active":false`) || !strings.Contains(lines[1], `"stop_hook_active":true`) {
		t.Errorf("stop hook inputs %q", lines)
	}
}

func readTestFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestClaudeSubagentsAndCommands: a .claude/agents/*.md subagent runs
// through Task's subagent_type with its prompt and only its tools (a call
// outside them is denied); a .claude/commands/*.md command is a prompt
// "/name args" with $ARGUMENTS and $1 filled in (issue 21 item 3).
func TestClaudeSubagentsAndCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, text := range map[string]string{
		"agents/reader.md":  "---\nname: reader\ndescription: Reads files and reports\ntools: Read, Grep\nmodel: inherit\n---\nREADER-PROMPT: you only read.\n",
		"commands/check.md": "---\ndescription: Check a file\nargument-hint: FILE\n---\nCheck $1 carefully (all: $ARGUMENTS).\n",
	} {
		p := filepath.Join(dir, ".claude", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, p, text)
	}
	srv, env := fakeModelWith(t, func(r *modeltest.Request) modeltest.Turn {
		done := len(toolResults(r)) > 0
		switch {
		case strings.Contains(r.System, "READER-PROMPT") && !done:
			return bashTurn("echo escaped > escaped.txt")
		case strings.Contains(r.System, "READER-PROMPT"):
			return modeltest.Turn{Text: "read it"}
		case !done:
			return call("", "Task", map[string]any{"description": "read", "prompt": "read x", "subagent_type": "reader"})
		}
		return modeltest.Turn{Text: "done"}
	})
	if r := runFlower(t, dir, env, "once", "/check a.go quickly"); r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if got := reqs[0].Messages[0].TextOf(); !strings.Contains(got, "Check a.go carefully (all: a.go quickly).") {
		t.Errorf("the command's prompt: %q", got)
	}
	var sub []*modeltest.Request
	for _, r := range reqs {
		if strings.Contains(r.System, "READER-PROMPT") {
			sub = append(sub, r)
		}
	}
	if len(sub) != 2 {
		t.Fatalf("%d subagent requests, want 2", len(sub))
	}
	offered := sub[0].Tools
	if strings.Join(offered, ",") != "Grep,Read" {
		t.Errorf("the subagent was offered %v, want Grep and Read only", offered)
	}
	if res := toolResults(sub[1]); len(res) != 1 || !strings.Contains(res[0], "not allowed for this agent") {
		t.Errorf("the subagent's Bash call: %q", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "escaped.txt")); !os.IsNotExist(err) {
		t.Errorf("the subagent ran Bash (stat: %v)", err)
	}
	if body := string(reqs[0].Body); !strings.Contains(body, "reader: Reads files and reports") || !strings.Contains(body, "subagent_type") {
		t.Errorf("the Task tool does not list the subagent")
	}
}
