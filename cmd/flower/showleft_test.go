package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/model/modeltest"
)

// TestShowMarksWhatTheViewLeftOut: through the real binary, a model's git
// push and rm -rf /* are denied, and a third denial makes the view drop
// both (it keeps the newest, R4.5); flower show still names each, in
// order, where it happened (issue 23 item 2), and --raw keeps every entry.
func TestShowMarksWhatTheViewLeftOut(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "flower.yaml"),
		"permissions:\n  deny: [\"Bash(git push:*)\", \"Bash(rm -rf /*)\", \"Bash(curl:*)\"]\n")
	_, env := fakeModelWith(t, modeltest.Script(
		bashTurn("git push origin main"),
		bashTurn("rm -rf /*"),
		bashTurn("echo kept"),
		bashTurn("curl example.com"),
		modeltest.Turn{Text: "done"},
	))
	r := runFlower(t, dir, env, "once", "try harmful things")
	m := sessionLine.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("once: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runFlower(t, dir, nil, "show", m[1])
	if r.code != 0 {
		t.Fatalf("show: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	push := "· denied (not sent to the model any more): Bash git push origin main\n"
	rm := "· denied (not sent to the model any more): Bash rm -rf /*\n"
	want := "try harmful things\n" + push + rm + "── assistant\n[Bash] {\"command\":\"echo kept\"}\n"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("show does not mark the dropped denials where they were:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, `[Bash] {"command":"curl example.com"}`) || strings.Count(r.stdout, "· denied") != 2 {
		t.Errorf("show marks the kept denial, or misses one:\n%s", r.stdout)
	}
	r = runFlower(t, dir, nil, "show", "--raw", m[1])
	if r.code != 0 || !strings.Contains(r.stdout, `"git push origin main"`) || !strings.Contains(r.stdout, `"rm -rf /*"`) {
		t.Errorf("show --raw: exit %d\n%s", r.code, r.stdout)
	}
}
