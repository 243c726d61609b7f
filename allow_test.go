//go:build linux || darwin

package flower_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/flower-run/flower"
)

// TestAllow (issue 20 item 2; moved from cmd/flower, issue 19): flower
// allow refuses without a terminal, shows the diff on a real pty, keeps
// the refusal after a no, approves after a yes, and has nothing to do
// once the config is as approved.
func TestAllow(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ws := t.TempDir()
	yaml := filepath.Join(ws, "flower.yaml")
	if err := os.WriteFile(yaml, []byte("permissions: {deny: [Bash]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := flower.ConfirmConfig(ws, nil); err != nil { // the first start approves
		t.Fatal(err)
	}
	if err := os.WriteFile(yaml, []byte("sandbox: {mode: \"off\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ue *flower.UsageError
	var out bytes.Buffer
	err := flower.Allow(ws, strings.NewReader("y\n"), &out)
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "needs a person at a terminal") {
		t.Fatalf("without a terminal: %v", err)
	}
	for _, c := range []struct{ answer, want string }{
		{"n\n", "not approved"},
		{"", "not approved"}, // the input ends: no
		{"yes\n", "flower: approved flower.yaml for " + ws},
	} {
		shown, err := allowOnPty(t, ws, c.answer)
		if !strings.Contains(shown, `+sandbox: {mode: "off"}`) || !strings.Contains(shown, "Apply these changes? [y/N]") {
			t.Errorf("%q: the diff was not shown:\n%s", c.answer, shown)
		}
		if got := shown + errText(err); !strings.Contains(got, c.want) {
			t.Errorf("%q: %q, want %q", c.answer, got, c.want)
		}
	}
	out.Reset()
	if err := flower.Allow(ws, strings.NewReader(""), &out); err != nil || !strings.Contains(out.String(), "nothing to do") {
		t.Errorf("after the yes: %v %q", err, out.String())
	}
}

// allowOnPty runs Allow with a pty's tty as the terminal, types answer
// and returns what it showed.
func allowOnPty(t *testing.T, ws, answer string) (string, error) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI: no pty: %v", err)
		}
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	if _, err := ptmx.Write([]byte(answer)); err != nil {
		t.Fatal(err)
	}
	if answer == "" {
		ptmx.Write([]byte{4}) // Ctrl-D: the input ends
	}
	err = flower.Allow(ws, tty, tty)
	tty.Close()
	shown, _ := io.ReadAll(ptmx) // EIO once the tty is closed
	return string(shown), err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
