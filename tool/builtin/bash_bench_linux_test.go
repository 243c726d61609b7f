package builtin

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/flower-run/flower/sandbox"
)

// BenchmarkBashCall: what one Bash call costs: bash run directly (the
// floor), and the Bash tool under the sandbox helper, without and with
// Landlock. The helper is flower (here the test binary) started again.
func BenchmarkBashCall(b *testing.B) {
	shell, err := findShell()
	if err != nil {
		b.Skip(err)
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(shell, "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	input := json.RawMessage(`{"command": "true"}`)
	bench := func(b *testing.B, env Env) {
		t := &Bash{Env: env}
		for b.Loop() {
			if res, err := t.Run(context.Background(), input); err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	}
	b.Run("helper", func(b *testing.B) { bench(b, Env{Workspace: b.TempDir()}) })
	b.Run("helper+landlock", func(b *testing.B) {
		ws := b.TempDir()
		sb, err := sandbox.New(sandbox.Config{Workspace: ws})
		if err != nil {
			b.Fatal(err)
		}
		defer sb.Close()
		if sb.Landlock() == 0 {
			b.Skip("no Landlock here")
		}
		bench(b, Env{Workspace: ws, Sandbox: sb})
	})
}
