package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flower-run/flower"
)

// TestSessionsShowTheTask: flower sessions names the person's task on the
// clarify row (not the step prompt's heading) and on the rows of the
// run's other steps, says ok for finished sessions, and --json gives the same rows (issue 23 item 7).
func TestSessionsShowTheTask(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if r := runFlower(t, dir, nil, "--model", "demo", "--timeout", "0", "write a greeting file"); r.code != 0 {
		t.Fatalf("demo run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := runFlower(t, dir, nil, "once", "--model", "demo", "say hello"); r.code != 0 {
		t.Fatalf("once: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := runFlower(t, dir, nil, "sessions", "--json")
	var rows []flower.SessionRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || r.code != 0 {
		t.Fatalf("sessions --json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	got := map[string]flower.SessionRow{}
	for _, row := range rows {
		got[row.Step] = row
		if row.Status != "ok" {
			t.Errorf("session %s (%s) status %q, want ok", row.ID, row.Step, row.Status)
		}
	}
	if got["clarify"].Task != "write a greeting file" || got["once"].Task != "say hello" {
		t.Errorf("tasks: clarify %q, once %q", got["clarify"].Task, got["once"].Task)
	}
	for _, step := range []string{"goals", "work", "judge"} { // the run's task, not flower's instruction
		if got[step].Task != "write a greeting file" {
			t.Errorf("the %s row's task is %q", step, got[step].Task)
		}
	}
	table := runFlower(t, dir, nil, "sessions").stdout
	if !strings.Contains(table, "STATUS") || !strings.Contains(table, "write a greeting file") || strings.Contains(table, "in the person's words") {
		t.Errorf("sessions table:\n%s", table)
	}
}

// TestDemoChecksWhatAWakeAdds: after flower --model demo "also say
// goodbye" the goals gain a check for it, the judge checks it, and flower
// status lists it under the first task (issue 23).
func TestDemoChecksWhatAWakeAdds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, task := range []string{"write a greeting file", "also say goodbye"} {
		if r := runFlower(t, dir, nil, "--model", "demo", "--timeout", "0", task); r.code != 0 {
			t.Fatalf("flower %q: exit %d\n%s%s", task, r.code, r.stdout, r.stderr)
		}
	}
	st := runFlower(t, dir, nil, "status").stdout
	for _, want := range []string{"ok: also say goodbye", "goals      4 checks", ": also say goodbye\n"} {
		if !strings.Contains(st, want) {
			t.Errorf("status lacks %q:\n%s", want, st)
		}
	}
	if !strings.Contains(st, "added ") {
		t.Errorf("status does not list the addition:\n%s", st)
	}
}
