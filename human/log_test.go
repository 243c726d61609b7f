package human

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flower-run/flower/event"
)

func TestQALog(t *testing.T) {
	f := newFixture(t, Options{MaxAsks: ptr(3)})

	done := f.goAsk(context.Background(), `{"question":"Which database?\nWe store little.","options":["SQLite","PostgreSQL"]}`)
	a := f.next(t)
	f.clk.advance(12 * time.Second)
	f.c.Answer(a.ID, "SQLite,\nembedded")
	wait(t, done)
	f.clk.skip(t) // q1's timer, so the next fire is q2's

	done = f.goAsk(context.Background(), `{"question":"Tabs?"}`)
	f.next(t)
	f.clk.fire(t)
	wait(t, done)

	done = f.goAsk(context.Background(), `{"question":"License?"}`)
	f.c.Decline(f.next(t).ID, "later")
	wait(t, done)

	f.askNow(t, `{"question":"More?"}`)
	f.askNow(t, `{"question":""}`)

	want := `### 2026-01-02 15:04:05 — Which database? We store little.

Options: SQLite | PostgreSQL
State: answered (waited 12s)

> SQLite,
> embedded

### 2026-01-02 15:04:17 — Tabs?

State: timeout (waited 30m0s)

### 2026-01-02 15:34:17 — License?

State: declined (waited 0s)

> later

### 2026-01-02 15:34:17 — More?

State: over_budget

### 2026-01-02 15:34:17 — (no question)

State: invalid

> ask: the question is empty; write the question you need answered.

`
	got := readFile(t, filepath.Join(f.dir, "notes", "qa.md"))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("qa.md (-want +got):\n%s", diff)
	}
}

// TestLogFailure: a failing write never fails the ask or loses the mail; it
// is reported as an error event.
func TestLogFailure(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Options{
		Timeout: Unattended,
		QALog:   filepath.Join(blocker, "qa.md"), // parent is a file: cannot be created
		Amend:   filepath.Join(blocker, "brief.md"),
	})
	if res := f.askNow(t, `{"question":"Q?"}`); res.Content != TimeoutText {
		t.Errorf("ask = %q, want the timeout text", res.Content)
	}
	f.c.Send("hello")
	if got := inbox(t, f); !strings.Contains(got, "hello") {
		t.Errorf("inbox = %q, want the mail", got)
	}
	errs := f.rec.kinds(event.Error)
	if len(errs) != 2 || !strings.Contains(errs[0].Text, "Q&A log") || !strings.Contains(errs[1].Text, "brief") {
		t.Errorf("error events = %v, want one for the log and one for the brief", errs)
	}
}
