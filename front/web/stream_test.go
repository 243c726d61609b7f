package web_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/event/eventlog"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/wake"
)

// TestOpenStreamNumbersOnAfterFinish keeps a serve's stream across two
// processes through a real SQLite store that each opens and closes: with
// no store yet it starts at 1, Finish stores what is left, and the next
// OpenStream numbers on after it (issue 14).
func TestOpenStreamNumbersOnAfterFinish(t *testing.T) {
	ctx := context.Background()
	ws, path := t.TempDir(), filepath.Join(t.TempDir(), "sessions.db")
	none := func(context.Context) (store.Store, error) { return nil, nil }
	open := func(context.Context) (store.Store, error) { return sqlite.Open(path) }
	onErr := func(err error) { t.Error(err) }

	first, err := web.OpenStream(ctx, none, ws, onErr)
	if err != nil {
		t.Fatal(err)
	}
	first.Publish(event.Event{Kind: event.Text, Text: "one"})
	if err := first.Finish(ctx, none); err != nil { // no store: nothing to do
		t.Fatal(err)
	}
	if err := first.Finish(ctx, open); err != nil {
		t.Fatal(err)
	}
	second, err := web.OpenStream(ctx, open, ws, onErr)
	if err != nil {
		t.Fatal(err)
	}
	second.Publish(event.Event{Kind: event.Text, Text: "two"})
	if err := second.Finish(ctx, open); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := eventlog.Reader{Log: s, Stream: store.SideLog(ws, store.EventLog)}.After(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Event.Text != "one" || got[1].Event.Text != "two" || got[0].Seq != 1 || got[1].Seq <= got[0].Seq {
		t.Fatalf("stored %+v, want one (#1) then two after it", got)
	}
	if n := second.Broker().Last(); n < got[1].Seq {
		t.Errorf("the second stream's broker is at %d, behind the stored #%d", n, got[1].Seq)
	}
}

// TestServeHub: flower serve's hub for the whole process serves the page
// on a real loopback listener; stop stores the verdict line the last
// wake left unstored, so the next process's hub numbers on after it
// (moved from cmd/flower's serveWakes, issue 19).
func TestServeHub(t *testing.T) {
	ctx := context.Background()
	ws, path := t.TempDir(), filepath.Join(t.TempDir(), "sessions.db")
	open := func(context.Context) (store.Store, error) { return sqlite.Open(path) }
	for i, text := range []string{"first process", "second process"} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		h, stop, err := web.ServeHub(ctx, l, open, ws, web.Options{Token: "0123456789abcdef0123"}, testLog{t})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(h.URL())
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET the page: %v %v", resp, err)
		}
		resp.Body.Close()
		h.Sink(event.Event{Kind: event.Text, Text: text}) // no wake attached: kept for stop
		stop()
		s, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := eventlog.Reader{Log: s, Stream: store.SideLog(ws, store.EventLog)}.After(ctx, 0, 0)
		s.Close()
		if err != nil || len(got) != i+1 || got[i].Event.Text != text || (i > 0 && got[1].Seq <= got[0].Seq) {
			t.Fatalf("after process %d: stored %+v (%v)", i+1, got, err)
		}
	}
}

// TestHubFront: a Host's wake with the hub as its front end is shown on
// the page's stream, banner first, and kept in the store with the verdict
// line the hub adds after it (flower serve's wake, issue 19).
func TestHubFront(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx := context.Background()
	ws, runDir := t.TempDir(), t.TempDir()
	h, err := flower.Open(ctx, flower.Options{Workspace: ws, RunDir: runDir, Model: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	open := func(context.Context) (store.Store, error) {
		return sqlite.Open(filepath.Join(runDir, flower.StoreFile))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hub, stop, err := web.ServeHub(ctx, l, open, ws, web.Options{Token: "0123456789abcdef0123"}, testLog{t})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := h.Prepare(ctx, wake.Options{Phrase: "write hello.txt"})
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	w, err := h.Wake(ctx, plan, flower.WakeOptions{Front: hub.Front(func() { shown++ }), Out: io.Discard})
	if err != nil || !w.Outcome.Passed || shown != 1 {
		t.Fatalf("%+v %v, shown %d times", w, err, shown)
	}
	hub.Ended(true, "")
	stop()
	s, err := sqlite.Open(filepath.Join(runDir, flower.StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := eventlog.Reader{Log: s, Stream: store.SideLog(ws, store.EventLog)}.After(ctx, 0, 0)
	if err != nil || len(got) < 3 {
		t.Fatalf("stored %d events, %v", len(got), err)
	}
	if got[0].Event.Payload["banner"] != true || got[len(got)-1].Event.Payload["ended"] != true {
		t.Errorf("first %+v, last %+v: want the banner first and the verdict line last", got[0].Event, got[len(got)-1].Event)
	}
}
