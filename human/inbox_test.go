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
	"github.com/flower-run/flower/store/mem"
)

func TestSendInbox(t *testing.T) {
	f := newFixture(t, Options{})
	brief := filepath.Join(f.dir, "notes", "brief.md")
	if err := os.MkdirAll(filepath.Dir(brief), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(brief, []byte("## Goal\n\nCount files.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.c.Send("also report the total bytes")
	f.c.Send("  \n") // blank: nothing to deliver
	f.clk.advance(time.Minute)
	f.c.Send("and skip vendor/\n## not a heading")

	got := inbox(t, f)
	want := "2 messages from the person since you last checked (also appended to the brief):\n" +
		"\n[2026-01-02 15:04:05]\nalso report the total bytes\n" +
		"\n[2026-01-02 15:05:05]\nand skip vendor/\n## not a heading\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first inbox (-want +got):\n%s", diff)
	}
	if got := inbox(t, f); got != InboxEmptyText {
		t.Errorf("second inbox = %q, want the empty text", got)
	}

	wantBrief := "## Goal\n\nCount files.\n" +
		"\n## Said by the person during the run\n" +
		"\n2026-01-02 15:04:05:\n\n> also report the total bytes\n" +
		"\n2026-01-02 15:05:05:\n\n> and skip vendor/\n> ## not a heading\n"
	if diff := cmp.Diff(wantBrief, readFile(t, brief)); diff != "" {
		t.Errorf("brief (-want +got):\n%s", diff)
	}

	var mails []string
	for _, e := range f.rec.kinds(event.Ask) {
		if e.Payload["kind"] == "mail" {
			mails = append(mails, e.Text)
		}
	}
	if want := []string{"also report the total bytes", "and skip vendor/\n## not a heading"}; !cmp.Equal(mails, want) {
		t.Errorf("mail events = %q, want %q", mails, want)
	}
}

func TestInboxEmptyAtStart(t *testing.T) {
	f := newFixture(t, Options{})
	if got := inbox(t, f); got != InboxEmptyText {
		t.Errorf("inbox = %q, want the empty text", got)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "notes", "brief.md")); !os.IsNotExist(err) {
		t.Errorf("brief touched without mail: %v", err)
	}
}

// TestSendBeforeAsk: typed text is never swallowed by a later question.
func TestSendBeforeAsk(t *testing.T) {
	f := newFixture(t, Options{})
	f.c.Send("use tabs")
	done := f.goAsk(context.Background(), `{"question":"Which license?"}`)
	f.c.Answer(f.next(t).ID, "MIT")
	if o := wait(t, done); o.res.Content != "The person answered:\n\nMIT" {
		t.Errorf("ask = %q", o.res.Content)
	}
	if got := inbox(t, f); !strings.Contains(got, "use tabs") {
		t.Errorf("inbox = %q, want the mail sent before the ask", got)
	}
	// A brief created by the first mail opens with the mid-run section.
	want := "\n## Said by the person during the run\n\n2026-01-02 15:04:05:\n\n> use tabs\n"
	if got := readFile(t, filepath.Join(f.dir, "notes", "brief.md")); got != want {
		t.Errorf("brief = %q, want %q", got, want)
	}
}

func TestInboxCancelled(t *testing.T) {
	f := newFixture(t, Options{})
	f.c.Send("keep me")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.inbx.Run(ctx, nil); err == nil {
		t.Error("inbox on a cancelled context: no error")
	}
	if got := inbox(t, f); !strings.Contains(got, "keep me") {
		t.Errorf("inbox = %q: a cancelled call must not consume mail", got)
	}
}

func TestUnsend(t *testing.T) { // issue 11: a note made the answer of a question is not delivered too
	s := mem.New()
	c := New(Options{Store: s, JournalKey: "~h", Workbench: t.TempDir()})
	c.Send("tabs")
	c.Send("and a README")
	if !c.Unsend("tabs") || c.Unsend("tabs") {
		t.Fatal("Unsend: want true once")
	}
	again := New(Options{Store: s, JournalKey: "~h", Workbench: t.TempDir()})
	if err := again.Restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []*Channel{c, again} {
		text, _, _ := ch.Deliver()
		if strings.Contains(text, "tabs") || !strings.Contains(text, "and a README") {
			t.Errorf("delivered %q", text)
		}
	}
}
