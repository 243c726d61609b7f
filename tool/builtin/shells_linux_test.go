package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/flower-run/flower/tool"
)

// TestBackgroundShell: run_in_background returns at once with an id;
// BashOutput reads new output; KillShell ends the shell and everything it
// started; StopAll ends the rest.
func TestBackgroundShell(t *testing.T) {
	env := testEnv(t)
	env.Shells = NewShells()
	tools := tool.NewRegistry(Builtins(env)...)
	m1, m2 := uniqueSleep(), uniqueSleep()
	ctx := tool.WithCall(context.Background(), "toolu_bg1")
	res, err := tools["Bash"].Run(ctx, json.RawMessage(fmt.Sprintf(
		`{"command": "echo hello; setsid sleep %s & sleep %s", "run_in_background": true}`, m1, m1)))
	if err != nil {
		t.Fatal(err)
	}
	wantOK(t, res, "toolu_bg1", "BashOutput")
	var seen strings.Builder
	eventually(t, "the output arrives", func() bool {
		r := run(t, tools["BashOutput"], map[string]any{"bash_id": "toolu_bg1"})
		seen.WriteString(r.Content)
		return strings.Contains(seen.String(), "hello") && strings.Contains(r.Content, "Status: running")
	})
	eventually(t, "both sleeps run", func() bool { return len(withArg(m1)) == 2 })
	wantOK(t, run(t, tools["KillShell"], map[string]any{"shell_id": "toolu_bg1"}), "stopped")
	if pids := withArg(m1); len(pids) > 0 {
		t.Fatalf("processes of a killed shell still run: %v", pids)
	}
	wantOK(t, run(t, tools["BashOutput"], map[string]any{"bash_id": "toolu_bg1"}), "Status: killed")
	wantError(t, run(t, tools["BashOutput"], map[string]any{"bash_id": "nope"}), "No background shell")

	ctx = tool.WithCall(context.Background(), "toolu_bg2")
	if _, err := tools["Bash"].Run(ctx, json.RawMessage(`{"command": "sleep `+m2+`", "run_in_background": true}`)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second shell runs", func() bool { return len(withArg(m2)) == 1 })
	env.Shells.StopAll()
	if pids := withArg(m2); len(pids) > 0 {
		t.Fatalf("StopAll left %v running", pids)
	}
}
