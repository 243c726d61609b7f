package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/workflow/starter"
)

// TestSlashCommandsAreNotSent: /help, /status, an unknown /command and a
// bare exit typed while the agent works are handled on the terminal,
// never sent to the agent nor added to the brief; a closed input is said
// (R10.3).
func TestSlashCommandsAreNotSent(t *testing.T) {
	t.Parallel()
	srv, env := fakeModel(t)
	release := holdClarify(t, srv, nil)
	dir := t.TempDir()
	p := startFlower(t, dir, env, true, testTask)
	for _, line := range []string{"/help", "/status", "/bogus", "exit"} {
		if _, err := p.stdin.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	p.waitOutput("unknown command /bogus")
	p.waitOutput("not sent: /exit stops flower")
	noteThenAnswer(t, p, release, "use tabs")
	p.stdin.Close()
	r := p.wait()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"/status  ", "$0.0000 for the steps done so far", "input closed (Ctrl-D)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	brief := readFile(t, filepath.Join(dir, starter.BriefPath))
	if strings.Contains(brief, "/help") || strings.Contains(brief, "/bogus") || strings.Contains(brief, "exit") || !strings.Contains(brief, "use tabs") {
		t.Errorf("brief.md:\n%s", brief)
	}
	for _, req := range srv.Requests() {
		for _, text := range userTexts(req) {
			if strings.Contains(text, "/help") || strings.Contains(text, "/bogus") || strings.Contains(text, "/status") {
				t.Fatalf("request %d carries a command: %q", req.N, text)
			}
		}
	}
}
