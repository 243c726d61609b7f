package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flower-run/flower/permission"
	"github.com/flower-run/flower/sandbox"
)

func TestSandboxAndPermissions(t *testing.T) {
	cfg, err := Parse("flower.yaml", []byte(`sandbox:
  mode: required
  network: false
  writable: [~/.cache, out, /tmp]
permissions:
  ask: ["Bash(git push:*)"]
  deny: ["Write(.github/**)", "mcp__github__*"]
`))
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	sc := cfg.SandboxConfig("/ws")
	want := []string{filepath.Join(home, ".cache"), "/ws/out", "/tmp"}
	if sc.Mode != sandbox.Required || sc.Network || strings.Join(sc.Writable, " ") != strings.Join(want, " ") {
		t.Fatalf("sandbox config = %+v", sc)
	}
	r, err := cfg.PermissionRules("/ws")
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Check("mcp__github__push", nil); d.Action != permission.Deny {
		t.Fatalf("mcp rule: %v", d)
	}
	if d := Defaults().SandboxConfig("/ws"); !d.Network || d.Mode != "" {
		t.Fatalf("defaults: %+v", d)
	}
}

// TestProtectedPaths: the workspace's config file is among the paths the
// sandbox protects (the name is written once in each package), and
// sandbox.protect_instructions adds the instruction files (issue 20).
func TestProtectedPaths(t *testing.T) {
	for _, on := range []bool{false, true} {
		cfg, err := Parse("flower.yaml", []byte(fmt.Sprintf("sandbox:\n  protect_instructions: %v\n", on)))
		if err != nil {
			t.Fatal(err)
		}
		p := cfg.SandboxConfig("/ws").Protect
		if !slices.Contains(p, filepath.Join("/ws", FileName)) || !slices.Contains(p, "/ws/.mcp.json") {
			t.Errorf("protected %v: want %s and .mcp.json", p, FileName)
		}
		for _, name := range []string{AgentsFile, ClaudeFile} {
			if got := slices.Contains(p, filepath.Join("/ws", name)); got != on {
				t.Errorf("protect_instructions %v: %s protected = %v", on, name, got)
			}
		}
	}
	if _, err := Parse("flower.yaml", []byte("sandbox:\n  protect_instructions: maybe\n")); err == nil || !strings.Contains(err.Error(), "protect_instructions") {
		t.Errorf("a bad protect_instructions: %v", err)
	}
}

func TestContainmentErrors(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"permissions:\n  deny:\n    - \"Write(.github/**)\"\n    - \"Bash(git push\"\n",
			`flower.yaml:4:7: permissions.deny[1]: rule "Bash(git push": missing ")" at the end`},
		{"permissions:\n  ask: [\"bash(ls)\"]\n", `did you mean Bash?`},
		{"permissions:\n  deny: [3]\n", `want a rule such as`},
		{"permissions:\n  allw: []\n", "allw"},
		{"sandbox:\n  mode: strict\n", `flower.yaml:2:9: sandbox.mode: got "strict", want auto, required or off`},
		{"sandbox:\n  network: maybe\n", "sandbox.network"},
	}
	for _, tt := range tests {
		_, err := Parse("flower.yaml", []byte(tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v, want one line with %q", tt.yaml, err, tt.want)
		}
	}
}
