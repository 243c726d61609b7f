package config

import (
	"os"
	"path/filepath"
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
