package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
)

// TestPrintJSONReadWithJq: a claude -p script's jq reads of the json
// object work unchanged on flower -p, with Claude Code's flags: a
// --disallowedTools rule denies the model's Bash call, which shows in
// permission_denials, and flags of newer Claude Codes (the SDK's) do not
// fail the run (issue 21 items 1, 3).
func TestPrintJSONReadWithJq(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI: jq is not installed: .ci/run installs it")
		}
		t.Skip("jq is not installed")
	}
	srv := modeltest.NewAnthropic(bashTurns("touch ran.txt"))
	defer srv.Close()
	dir := t.TempDir()
	script := flowerBin + ` -p --output-format json --disallowedTools "Bash(touch:*)" --setting-sources=user,project ` +
		`--include-partial-messages --a-future-flag=1 "touch it" | jq -r '.result, .session_id, .is_error, .num_turns, ` +
		`(.total_cost_usd > 0), (.usage.input_tokens > 0), .stop_reason, (.permission_denials | length), ` +
		`.permission_denials[0].tool_name, (.duration_api_ms >= 0), (.modelUsage | length)'`
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(dir), "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=test")
	r := ranOf(t, cmd)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 11 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := []string{"Done.", lines[1], "false", "2", "true", "true", "end_turn", "1", "Bash", "true", "1"}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("jq line %d: %q, want %q\n%s", i+1, lines[i], want[i], r.stdout)
		}
	}
	if len(lines[1]) != 36 {
		t.Errorf("session_id %q", lines[1])
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Error("the disallowed command ran")
	}
}

// TestPrintContinue: -c continues the newest session, and --output-format
// text prints the result alone.
func TestPrintContinue(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Text: "one"}, modeltest.Turn{Text: "two"}))
	defer srv.Close()
	dir := t.TempDir()
	env := []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=test"}
	if r := runFlower(t, dir, env, "-p", "first"); r.code != 0 || r.stdout != "one\n" {
		t.Fatalf("exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := runFlower(t, dir, env, "-p", "-c", "--append-system-prompt", "Be brief.", "second"); r.code != 0 || r.stdout != "two\n" {
		t.Fatalf("exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || len(reqs[1].Messages) != 3 || !strings.Contains(reqs[1].System, "Be brief.") {
		t.Errorf("the second run did not continue the first's session with the appended prompt: %d requests", len(reqs))
	}
	r := runFlower(t, dir, env, "-p", "--permission-mode", "sometimes", "x")
	if r.code != 2 || !strings.Contains(r.stderr, "use default, acceptEdits, plan or bypassPermissions") {
		t.Errorf("a bad mode: exit %d %s", r.code, r.stderr)
	}
}

// TestPrintJSONSchema: --json-schema asks the model for JSON in the
// system prompt, and the result carries it as structured_output.
func TestPrintJSONSchema(t *testing.T) {
	t.Parallel()
	srv := modeltest.NewAnthropic(modeltest.Script(modeltest.Turn{Text: "Counted.\n{\"files\": 3}"}))
	defer srv.Close()
	dir := t.TempDir()
	r := runFlower(t, dir, []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=test"},
		"-p", "--output-format", "json", "--json-schema", `{"type":"object","properties":{"files":{"type":"integer"}}}`, "count")
	if r.code != 0 || !strings.Contains(r.stdout, `"structured_output":{"files":3}`) {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].System, `"files":{"type":"integer"}`) {
		t.Error("the schema is not in the system prompt")
	}
}
