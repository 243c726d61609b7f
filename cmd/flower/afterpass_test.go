package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestAskAfterPass(t *testing.T) { // issue 11: a bare flower after a pass asks
	for _, tt := range []struct {
		typed   string
		want    startup
		recheck bool
		err     bool
	}{
		{"\n", startup{}, true, false},
		{"also say bye\n", startup{phrase: "also say bye"}, false, false},
		{"/new\nwrite a CLI\n", startup{phrase: "write a CLI", fresh: true}, false, false},
		{"/new\n\n", startup{fresh: true}, false, true},
		{"", startup{}, false, true}, // Ctrl-D
	} {
		var out strings.Builder
		got, recheck, err := askAfterPass(strings.NewReader(tt.typed), &out, "BANNER")
		if (err != nil) != tt.err || (err == nil && (got != tt.want || recheck != tt.recheck)) {
			t.Errorf("askAfterPass(%q) = %+v, %v, %v; want %+v, %v, error %v", tt.typed, got, recheck, err, tt.want, tt.recheck, tt.err)
		}
		if !strings.HasPrefix(out.String(), "BANNER\n"+passPrompt) {
			t.Errorf("askAfterPass shows %q", out.String())
		}
	}
}

// TestWakeAfterPass: after a passed verdict a bare unattended flower makes
// no model call and exits 0 with the verdict; --recheck (Enter at the
// terminal's question) runs a fresh judge and nothing else; status shows
// the last verdict and the total cost (issue 11).
func TestWakeAfterPass(t *testing.T) {
	t.Parallel()
	srv, env := fakeModel(t)
	dir := t.TempDir()
	if r := runFlower(t, dir, env, args(testTask)...); r.code != 0 {
		t.Fatalf("the first run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	shown, ok := passedPlan(context.Background(), &globals{runDir: filepath.Join(dir, "runs"), workspace: dir})
	if !ok || !strings.Contains(shown, "passed its verdict\n  cat out.txt printed: hi") || !strings.Contains(shown, "<- continuing in") {
		t.Errorf("what a terminal is shown after the pass: %v\n%s", ok, shown)
	}
	n := srv.Count()
	r := runFlower(t, dir, env, args()...)
	if r.code != 0 || srv.Count() != n || !strings.Contains(r.stdout, "passed its verdict") {
		t.Fatalf("a bare unattended wake after a pass: exit %d, %d model calls\n%s%s", r.code, srv.Count()-n, r.stdout, r.stderr)
	}
	r = runFlower(t, dir, env, args("--recheck")...)
	if r.code != 0 || !strings.Contains(r.stdout, "✓ verdict passed") {
		t.Fatalf("--recheck: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()[n:]
	if len(reqs) == 0 {
		t.Fatal("--recheck made no model call")
	}
	for _, req := range reqs {
		if step := stepOf(req.System); step != "judge" {
			t.Fatalf("--recheck called the %s step; only a judge may run", step)
		}
	}
	if len(reqs[0].Messages) != 1 {
		t.Errorf("the recheck's judge is not fresh: %d messages", len(reqs[0].Messages))
	}
	r = runFlower(t, dir, env, "status")
	for _, want := range []string{"cost       $", "in all (2 runs)", "verdict    cat out.txt printed: hi"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
	if r = runFlower(t, dir, env, args("--recheck", "more")...); r.code != 2 {
		t.Errorf("--recheck with a phrase: exit %d %s", r.code, r.stderr)
	}
}
