package web_test

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/event/eventlog"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
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
