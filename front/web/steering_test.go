package web_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/event/eventlog"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/wake"
)

// TestSteeringFollowsTheJournalAndStoresEachWake drives two wakes of one
// workspace through a Steering on a real SQLite store: mail put in the
// journal before a wake reaches its channel on attach, each wake's events
// are stored, and the second wake numbers on after the first (issue 14,
// R6.7).
func TestSteeringFollowsTheJournalAndStoresEachWake(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := store.SideLog(ws, store.HumanJournal)
	if err := (human.Remote{Store: s, Key: key}).Send(ctx, "use tabs"); err != nil {
		t.Fatal(err)
	}
	st := web.NewSteering(ws, true, testLog{t})
	st.Publish(event.Event{Kind: event.Text, Text: "before any wake"}) // dropped: nothing attached
	for wake, text := range []string{"first wake", "second wake"} {
		ch := human.New(human.Options{Sink: st.Publish, Timeout: human.Forever, Store: s, JournalKey: key,
			Workbench: filepath.Join(ws, ".flower")})
		detach := st.Attach(ctx, ch, func(string) {}, s)
		st.Publish(event.Event{Kind: event.Text, Text: text})
		detach()
		st.Publish(event.Event{Kind: event.Text, Text: "after wake"}) // dropped: detached
		got, err := eventlog.Reader{Log: s, Stream: store.SideLog(ws, store.EventLog)}.After(ctx, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, n := range got {
			texts = append(texts, n.Event.Text)
		}
		want := "use tabs|first wake" // the mail reached the first wake's channel only: the second saw it applied
		if wake == 1 {
			want += "|second wake"
		}
		if strings.Join(texts, "|") != want {
			t.Fatalf("wake %d: stored %q, want %q", wake+1, texts, want)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Seq <= got[i-1].Seq {
				t.Fatalf("wake %d: seq %d after %d: the stream did not number on", wake+1, got[i].Seq, got[i-1].Seq)
			}
		}
	}
}

// testLog fails the test on any error line.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Errorf("logged: %s", p)
	return len(p), nil
}

// TestWrapStoresAWake: a Host's wake on a front end wrapped by a
// Steering keeps its events in the workspace's stored stream and still
// shows them on the front end, which is attached and detached once
// (issue 19: steered, moved from cmd/flower).
func TestWrapStoresAWake(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ctx := context.Background()
	ws := t.TempDir()
	h, err := flower.Open(ctx, flower.Options{Workspace: ws, RunDir: t.TempDir(), Model: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	plan, err := h.Prepare(ctx, wake.Options{Phrase: "write hello.txt"})
	if err != nil {
		t.Fatal(err)
	}
	shown, attached := 0, 0
	fe := web.NewSteering(ws, true, testLog{t}).Wrap(flower.Front{
		Sink: func(event.Event) { shown++ },
		Attach: func(context.Context, flower.WakeRun) (func(), error) {
			attached++
			return func() { attached-- }, nil
		},
	})
	w, err := h.Wake(ctx, plan, flower.WakeOptions{Front: fe, Out: io.Discard})
	if err != nil || !w.Outcome.Passed {
		t.Fatalf("%+v %v", w, err)
	}
	got, err := eventlog.Reader{Log: h.Store().(store.Events), Stream: store.SideLog(ws, store.EventLog)}.After(ctx, 0, 0)
	if err != nil || len(got) == 0 || shown < len(got) || attached != 0 {
		t.Errorf("stored %d events (%v), shown %d, attached %d after the wake", len(got), err, shown, attached)
	}
}
