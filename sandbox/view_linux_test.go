package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMountView: in the sandbox, flower's state is not there at all and
// the protected paths can be read but not written, removed, renamed or
// added to, while the rest of the workspace stays writable (issue 20).
// Mode off and auto: the mount view holds with Landlock or without.
func TestMountView(t *testing.T) {
	needNamespaces(t)
	for _, mode := range []Mode{Off, Auto} {
		for _, instructions := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/instructions=%v", mode, instructions), func(t *testing.T) {
				ws, state := t.TempDir(), t.TempDir()
				files := map[string]string{"flower.yaml": "sandbox: {mode: required}\n", ".mcp.json": "{}\n",
					".claude/settings.json": "{}\n", ".git/config": "[core]\n", ".git/hooks/pre-commit.sample": "#!/bin/sh\n",
					"AGENTS.md": "be good\n"}
				for name, body := range files {
					writeFile(t, filepath.Join(ws, name), body)
				}
				writeFile(t, filepath.Join(state, "sessions.db"), "secret state\n")
				s := newSandbox(t, Config{Mode: mode, Workspace: ws, Hide: []string{state},
					Protect: Protected(ws, instructions)})
				out, _ := run(t, s, fmt.Sprintf(`cat %[1]s/sessions.db && echo BAD state read
ls -A %[1]s | grep . && echo BAD state listed
touch %[1]s/new && echo BAD state written
cat flower.yaml >/dev/null || echo BAD flower.yaml unreadable
echo 'sandbox: {mode: off}' > flower.yaml && echo BAD flower.yaml written
rm -f .mcp.json; test -e .mcp.json || echo BAD .mcp.json removed
mv flower.yaml moved.yaml && echo BAD flower.yaml renamed
echo x >> .claude/settings.json && echo BAD .claude written
touch .claude/new && echo BAD .claude added to
rm -rf .claude; test -e .claude || echo BAD .claude removed
echo 'exit 0' > .git/hooks/pre-commit && echo BAD hook added
echo '[x]' >> .git/config && echo BAD git config written
echo more >> AGENTS.md && echo AGENTS.md written
echo ok > other && mkdir -p sub && echo ok > sub/x && echo OTHER written`, state))
				if strings.Contains(out, "BAD") || !strings.Contains(out, "OTHER written") {
					t.Fatalf("the mount view leaks:\n%s", out)
				}
				if got := strings.Contains(out, "AGENTS.md written"); got == instructions {
					t.Errorf("AGENTS.md written = %v with protect_instructions %v:\n%s", got, instructions, out)
				}
				for name, body := range files {
					if name == "AGENTS.md" && !instructions {
						continue
					}
					if b, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(b) != body {
						t.Errorf("%s changed: %q, %v", name, b, err)
					}
				}
				if _, err := os.Stat(filepath.Join(ws, ".git/hooks/pre-commit")); err == nil {
					t.Error("a hook was added")
				}
			})
		}
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHideKeepsTheWorkspace: a hidden directory that holds the workspace
// (a run dir above it) is not hidden: the workspace would go with it.
func TestHideKeepsTheWorkspace(t *testing.T) {
	needNamespaces(t)
	state := t.TempDir()
	ws := filepath.Join(state, "ws")
	writeFile(t, filepath.Join(ws, "f"), "here\n")
	s := newSandbox(t, Config{Mode: Off, Workspace: ws, Hide: []string{state}})
	if out, err := run(t, s, "cat f"); err != nil || out != "here\n" {
		t.Fatalf("cat f: %q, %v", out, err)
	}
}

// TestNetworkNamespace: with network: false a command has a network
// namespace of its own, without Landlock too (mode off): it cannot reach
// a server on the host's loopback, and sees no interface but lo.
func TestNetworkNamespace(t *testing.T) {
	needNamespaces(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	script := fmt.Sprintf(`(exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null && echo connected; tail -n +3 /proc/net/dev | cut -d: -f1`,
		ln.Addr().(*net.TCPAddr).Port)
	for _, allow := range []bool{true, false} {
		s := newSandbox(t, Config{Mode: Off, Network: allow})
		out, _ := runBash(t, s, bash, script)
		if got := strings.Contains(out, "connected"); got != allow {
			t.Errorf("network %v: connected = %v; output %q", allow, got, out)
		}
		if !allow && strings.TrimSpace(out) != "lo" {
			t.Errorf("network false: interfaces %q, want lo only", out)
		}
		if s.Network() != allow {
			t.Errorf("Network() = %v with network %v", s.Network(), allow)
		}
	}
}

// TestFallbackSaysWhatIsNotContained: without namespaces flower still
// runs commands, and its one-line note says what the missing mount view
// leaves open.
func TestFallbackSaysWhatIsNotContained(t *testing.T) {
	saved := namespaces()
	nsConf = nsConfig{err: fmt.Errorf("forced by the test")}
	t.Cleanup(func() { nsConf = saved })
	s := newSandbox(t, Config{Mode: Off, Network: true})
	note := NamespaceNote() // the namespaces' part of what is not contained (Note says the mode's)
	for _, want := range []string{"no PID namespaces here (forced by the test)", "flower's state", "flower.yaml"} {
		if !strings.Contains(note, want) || strings.Contains(note, "\n") {
			t.Errorf("note %q: want one line with %q", note, want)
		}
	}
	if out, err := run(t, s, "echo ran"); err != nil || out != "ran\n" {
		t.Fatalf("a command without namespaces: %q, %v", out, err)
	}
}
