package main

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flower-run/flower/model/modeltest"

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

// TestLineBeforeAQuestionIsOffered: a line typed just before a question
// appears is offered as its answer; Enter confirms it, and the model gets
// it as the answer only, not as a note too (R10.3).
func TestLineBeforeAQuestionIsOffered(t *testing.T) {
	t.Parallel()
	srv, env := fakeModel(t)
	// Clarify's first request is under way (its prompt sent) when the
	// line is typed: the line is mail the first request did not carry.
	arrived, held := make(chan struct{}), make(chan struct{})
	var once, released sync.Once
	release := func() { released.Do(func() { close(held) }) }
	t.Cleanup(release)
	srv.onRequest(func(r *modeltest.Request) {
		if stepOf(r.System) == "clarify" {
			once.Do(func() { close(arrived); <-held })
		}
	})
	dir := t.TempDir()
	p := startFlower(t, dir, env, true, testTask)
	select {
	case <-arrived:
	case <-p.done:
		t.Fatalf("flower ended before clarify asked the model:\n%s%s", p.stdout, p.stderr)
	}
	if _, err := p.stdin.Write([]byte("2\n")); err != nil {
		t.Fatal(err)
	}
	p.waitOutput("✉ noted")
	release()
	p.waitOutput(`you typed "2" just before this question: Enter answers with it`)
	if _, err := p.stdin.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	r := p.wait()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	clarify := ofStep(srv.Requests(), "clarify")
	if res := toolResults(clarify[1]); len(res) != 1 || res[0] != "The person answered:\n\n"+askSecond {
		t.Errorf("the ask's result: %q, want option 2", res)
	}
	for _, req := range clarify {
		if d := delivered(req); d != "" {
			t.Errorf("the line confirmed as the answer was delivered as a note too: %q", d)
		}
	}
}
