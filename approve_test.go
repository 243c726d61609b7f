package flower_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower"
)

// TestConfirmConfig (issue 20 item 2): the first start approves what is
// there; a later change to any confirmed file (.claude/settings.json
// here) is refused unattended with one line, shown as a diff to a
// Confirmer, kept refused on a no and approved on a yes; the record is
// in the state directory, not the workspace.
func TestConfirmConfig(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	ws := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("flower.yaml", "permissions: {deny: [Bash]}\n")
	if err := flower.ConfirmConfig(ws, nil); err != nil {
		t.Fatalf("first start: %v", err)
	}
	if err := flower.ConfirmConfig(ws, nil); err != nil {
		t.Fatalf("unchanged: %v", err)
	}
	write(".claude/settings.json", `{"permissions": {"allow": ["Bash"]}}`+"\n")
	err := flower.ConfirmConfig(ws, nil)
	var ue *flower.UsageError
	if !errors.As(err, &ue) || !errors.Is(err, flower.ErrNotApproved) || !strings.Contains(err.Error(), ".claude/settings.json changed") ||
		!strings.Contains(err.Error(), "flower allow --workspace "+ws) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("unattended after a change: %v", err)
	}
	var shown string
	no := func(diff string) (bool, error) { shown = diff; return false, nil }
	if err := flower.ConfirmConfig(ws, no); !errors.Is(err, flower.ErrNotApproved) {
		t.Fatalf("a no: %v", err)
	}
	if !strings.Contains(shown, "+++ .claude/settings.json") || !strings.Contains(shown, `+{"permissions": {"allow": ["Bash"]}}`) || strings.Contains(shown, "flower.yaml") {
		t.Errorf("diff:\n%s", shown)
	}
	yes := func(string) (bool, error) { return true, nil }
	if err := flower.ConfirmConfig(ws, yes); err != nil {
		t.Fatalf("a yes: %v", err)
	}
	if err := flower.ConfirmConfig(ws, nil); err != nil {
		t.Fatalf("after a yes: %v", err)
	}
	if err := os.Remove(filepath.Join(ws, "flower.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := flower.ConfirmConfig(ws, nil); err == nil || !strings.Contains(err.Error(), "flower.yaml") {
		t.Errorf("a removed flower.yaml is a change too: %v", err)
	}
	dir, _ := flower.ApprovedDir()
	if !strings.HasPrefix(dir, state) {
		t.Errorf("approvals in %s, want under the state directory %s", dir, state)
	}
	if _, err := os.Stat(filepath.Join(ws, ".flower")); err == nil {
		t.Error("an approval was written in the workspace")
	}
}

// TestApprovalNamesTheStateDir: a state dir that cannot hold the approval
// record is named in the one line, with XDG_STATE_HOME (--run-dir does
// not move approvals) (issue 23).
func TestApprovalNamesTheStateDir(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", blocker) // a file where a directory must go: fails as root too
	err := flower.ConfirmConfig(t.TempDir(), nil)
	if err == nil {
		t.Fatal("the approval was recorded under a file")
	}
	for _, want := range []string{"the approved config", blocker, "XDG_STATE_HOME=DIR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "--run-dir") {
		t.Errorf("%q names --run-dir, which does not move approvals", err)
	}
}
