package main

import (
	"strings"
	"syscall"
	"testing"

	"github.com/flower-run/flower/internal/failpoint"
)

// Issue 9 item 9: the person's words survive a kill -9. An answer given
// just before the kill is not asked for again, and a note typed while the
// agent worked reaches it after the wake although it never read its inbox
// before the kill.

func TestAnswerGivenBeforeAKillIsNotAskedAgain(t *testing.T) {
	t.Parallel()
	srv, env := fakeModel(t)
	dir := t.TempDir()
	// after-effect:1 is clarify's ask: settled, its result not yet stored.
	p := startFlower(t, dir, append(env, failpoint.Env+"=after-effect:1"), true, testTask)
	p.waitOutput("? " + askQuestion)
	if _, err := p.stdin.Write([]byte("2\n")); err != nil {
		t.Fatal(err)
	}
	if p.wait(); p.signal() != syscall.SIGKILL {
		t.Fatal("flower was not killed after the answer")
	}
	r := runFlower(t, dir, env, args()...)
	if r.code != 0 {
		t.Fatalf("the wake: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, askQuestion) {
		t.Errorf("the wake asked the answered question again:\n%s", r.stdout)
	}
	clarify := ofStep(srv.Requests(), "clarify")
	if res := toolResults(clarify[1]); len(res) != 1 || res[0] != "The person answered:\n\n"+askSecond {
		t.Errorf("the ask's result after the wake: %q, want the answer given before the kill", res)
	}
}

func TestNoteTypedBeforeAKillReachesTheAgent(t *testing.T) {
	t.Parallel()
	srv, env := fakeModel(t)
	dir := t.TempDir()
	// The first request waits for the note, so that it is mail and not an
	// answer; the kill comes with clarify's second request: the ask is
	// answered, the inbox not yet read.
	tr := newTrap("clarify", 2, syscall.SIGKILL)
	release := holdClarify(t, srv, tr.onRequest)
	p := startFlower(t, dir, env, true, testTask)
	tr.arm(p)
	noteThenAnswer(t, p, release, "use tabs")
	if p.wait(); p.signal() != syscall.SIGKILL {
		t.Fatal("flower was not killed")
	}
	srv.onRequest(nil)
	r := runFlower(t, dir, env, args()...)
	if r.code != 0 {
		t.Fatalf("the wake: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Delivered at the boundary before the request the kill came with: in
	// the store before that request, so the wake neither loses it nor
	// delivers it again (R10.3).
	clarify := ofStep(srv.Requests(), "clarify")
	last := clarify[len(clarify)-1]
	if n := strings.Count(strings.Join(append(userTexts(last), toolResults(last)...), "\n"), "use tabs"); n != 1 {
		t.Errorf("the note typed before the kill reached clarify's last request %d times, want once:\n%q\n%q", n, userTexts(last), toolResults(last))
	}
}
