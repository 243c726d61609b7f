package web_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/event/eventlog"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/store/sqlite"
)

const stream = "ws/~events"

// storedServer is a UI over a store on disk: a broker continuing the
// stored stream, a writer storing its events, and the web server reading
// what the broker no longer keeps from the store.
type storedServer struct {
	*fixture
	db *sqlite.DB
	w  *eventlog.Writer
}

func newStoredServer(t *testing.T, path string, keep int) *storedServer {
	t.Helper()
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	start, _, err := eventlog.Resume(context.Background(), db, stream)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ws: t.TempDir(), events: event.NewBrokerAt(keep, start)}
	w := eventlog.NewWriter(f.events, stream, start)
	w.OnError = func(err error) { t.Errorf("writer: %v", err) }
	w.Attach(db)
	f.ch = human.New(human.Options{Sink: f.events.Publish, Timeout: human.Forever, Workbench: filepath.Join(f.ws, ".flower")})
	s, err := web.New(web.Options{Token: token, Events: f.events, Channel: f.ch,
		History: eventlog.Reader{Log: db, Stream: stream}})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(s)
	return &storedServer{fixture: f, db: db, w: w}
}

// publish publishes n text events and, every third, a delta (never
// stored), as a run's sink does.
func (s *storedServer) publish(from, n int) {
	for i := from; i < from+n; i++ {
		if i%3 == 0 {
			s.events.Publish(event.Event{Kind: "delta", Text: "piece"})
		}
		s.events.Publish(event.Event{Kind: event.Text, Text: fmt.Sprint("t", i)})
		s.w.Kick()
	}
}

// stop shuts the UI down as flower serve does: the server stops, the
// writer stores what is left, the store closes.
func (s *storedServer) stop() {
	s.srv.Close()
	if err := s.w.End(); err != nil {
		s.t.Fatal(err)
	}
	s.events.Close()
	if err := s.db.Close(); err != nil {
		s.t.Fatal(err)
	}
}

type eventsAnswer struct {
	Events []struct {
		Seq  int    `json:"seq"`
		Kind string `json:"kind"`
		Text string `json:"text"`
	} `json:"events"`
	Gap bool `json:"gap"`
}

// texts are the texts of the text events of an answer, and the last seq.
func (a eventsAnswer) texts() (out []string, last int) {
	for _, e := range a.Events {
		if e.Kind == string(event.Text) {
			out = append(out, e.Text)
		}
		last = e.Seq
	}
	return out, last
}

func want(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprint("t", i))
	}
	return out
}

// TestResumeAfterRestart: a UI restarted mid-run (a new server and broker
// over the same store) numbers on from the stored stream, and a client
// resumes from its last seq with nothing lost and no gap, by GET /events
// and by the WebSocket; a client far behind reads the stored events.
func TestResumeAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	one := newStoredServer(t, path, 0)
	one.publish(0, 20)
	var a eventsAnswer
	one.call("GET", "/events?after=0", "", &a)
	got, last := a.texts()
	if fmt.Sprint(got) != fmt.Sprint(want(0, 20)) || a.Gap {
		t.Fatalf("first server: %v (gap %v)", got, a.Gap)
	}
	one.stop()

	two := newStoredServer(t, path, 0)
	defer two.stop()
	if two.events.Last() != last+1 { // the first server's end mark
		t.Fatalf("the new broker starts at %d; want %d, past the first one's end mark", two.events.Last(), last+1)
	}
	two.publish(20, 10)
	var b eventsAnswer
	two.call("GET", fmt.Sprintf("/events?after=%d", last), "", &b)
	if got, _ := b.texts(); fmt.Sprint(got) != fmt.Sprint(want(20, 30)) || b.Gap {
		t.Errorf("resumed from %d: %v (gap %v); want t20..t29, no gap", last, got, b.Gap)
	}
	// From the start: the stored events of the first server (no deltas),
	// then the new ones.
	var c eventsAnswer
	two.call("GET", "/events?after=5", "", &c) // seq 5 is the delta before t3
	if got, _ := c.texts(); fmt.Sprint(got) != fmt.Sprint(want(3, 30)) || c.Gap {
		t.Errorf("after=5: %v (gap %v); want t3..t29, no gap", got, c.Gap)
	}
	for _, e := range c.Events {
		if e.Seq <= last && e.Kind == "delta" {
			t.Errorf("a stored delta came back: %+v", e)
		}
	}
	// The WebSocket resumes the same way.
	ctx := watchdog(t)
	conn, err := two.dial(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	var ws []string
	for len(ws) < 30 {
		m := read(t, ctx, conn)
		if m.Gap {
			t.Errorf("WebSocket message with a gap: %+v", m)
		}
		for _, e := range m.Events {
			if e.Kind == string(event.Text) {
				ws = append(ws, e.Text)
			}
		}
	}
	if fmt.Sprint(ws) != fmt.Sprint(want(0, 30)) {
		t.Errorf("WebSocket from 0 after the restart: %v", ws)
	}
}

// TestHistoryBehindWindow: a client older than the broker's window reads
// the rest from the store, in the same server, without a gap.
func TestHistoryBehindWindow(t *testing.T) {
	s := newStoredServer(t, filepath.Join(t.TempDir(), "sessions.db"), 4)
	defer s.stop()
	for i := 0; i < 30; i += 2 {
		s.publish(i, 2) // at most 3 events, within the window
		s.w.Detach()    // stores them before more are published
		s.w.Attach(s.db)
	}
	var a eventsAnswer
	s.call("GET", "/events?after=0", "", &a)
	if got, _ := a.texts(); fmt.Sprint(got) != fmt.Sprint(want(0, 30)) || a.Gap {
		t.Errorf("after=0 with a window of 4: %v (gap %v)", got, a.Gap)
	}
}

// TestResumeAfterACrash: a UI that died before storing its last events
// leaves no end mark; the next one numbers on Skip past the stored events,
// so a client that saw the lost ones never takes new events for them.
func TestResumeAfterACrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions.db")
	one := newStoredServer(t, path, 0)
	one.publish(0, 5)
	one.w.Detach() // t0..t4 stored
	stored := one.events.Last()
	one.publish(5, 3) // published, seen, never stored: the process dies
	var a eventsAnswer
	one.call("GET", "/events?after=0", "", &a)
	_, seen := a.texts()
	one.srv.Close()
	one.events.Close()
	one.db.Close()

	two := newStoredServer(t, path, 0)
	defer two.stop()
	if got, want := two.events.Last(), stored+eventlog.Skip; got != want {
		t.Fatalf("the new broker starts at %d; want %d", got, want)
	}
	two.publish(100, 2)
	var b eventsAnswer
	two.call("GET", fmt.Sprintf("/events?after=%d", seen), "", &b)
	if got, _ := b.texts(); fmt.Sprint(got) != fmt.Sprint(want(100, 102)) || b.Events[0].Seq <= seen {
		t.Errorf("after=%d: %+v; want only t100, t101, numbered past %d", seen, b, seen)
	}
	var c eventsAnswer
	two.call("GET", "/events?after=0", "", &c)
	if got, _ := c.texts(); fmt.Sprint(got) != fmt.Sprint(append(want(0, 5), want(100, 102)...)) {
		t.Errorf("after=0: %v; want the stored t0..t4, then t100, t101", got)
	}
}
