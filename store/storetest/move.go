package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flower-run/flower/store"
)

// testMove: a moved workspace's sessions, side logs, summaries, events,
// runs and lineage are all found under the new path and none under the
// old; a neighbour whose path extends the old one is untouched; a second
// Move is a no-op; a move onto a path with state is refused (issue 22
// item 3).
func testMove(t *testing.T, s store.Store) {
	mv, ok := s.(store.Mover)
	if !ok {
		t.Fatalf("%T cannot move a workspace (store.Mover)", s)
	}
	ctx := context.Background()
	const from, to, other = "/w/a", "/w/b", "/w/ab"
	key, okey := store.SessionKey(from, "s1"), store.SessionKey(other, "o1")
	sub, journal := key+"/agent-1", store.SideLog(from, store.HumanJournal)
	run := fullRun(t)
	run.Workspace = from
	mustCommit(t, s, store.Batch{
		Wake: from, Bind: []store.Binding{bind(from, "work", "s1")}, Run: &run,
		Meta:    []store.Meta{{Key: key, Workspace: from, Created: t0}, {Key: sub, Workspace: from, ForkOf: key, Created: t0}},
		Entries: append(append(chain(key, 0, 3), chain(sub, 0, 1)...), chain(journal, 0, 1)...)})
	mustCommit(t, s, store.Batch{Bind: []store.Binding{bind(other, "work", "o1")},
		Meta: []store.Meta{{Key: okey, Workspace: other, Created: t0}}, Entries: chain(okey, 0, 1)})
	if err := s.PutSummary(ctx, key, "handoff"); err != nil {
		t.Fatal(err)
	}
	ev, hasEvents := s.(store.Events)
	stream := store.SideLog(from, store.EventLog)
	if hasEvents {
		if err := ev.AppendEvents(ctx, event(stream, 1), event(stream, 2)); err != nil {
			t.Fatal(err)
		}
	}

	if err := mv.Move(ctx, from, to); err != nil {
		t.Fatalf("Move: %v", err)
	}
	nkey, nsub := store.SessionKey(to, "s1"), store.SessionKey(to, "s1")+"/agent-1"
	moved := func(es []store.Entry, key string) []store.Entry {
		for i := range es {
			es[i].Key = key
		}
		return es
	}
	want := chain(key, 0, 3)
	diffEntries(t, nkey, mustLoad(t, s, nkey), moved(want, nkey))
	diffEntries(t, nsub, mustLoad(t, s, nsub), moved(chain(sub, 0, 1), nsub))
	njournal := store.SideLog(to, store.HumanJournal)
	diffEntries(t, njournal, mustLoad(t, s, njournal), moved(chain(journal, 0, 1), njournal))
	diffEntries(t, key, mustLoad(t, s, key), nil)
	diffEntries(t, okey, mustLoad(t, s, okey), chain(okey, 0, 1))
	m, ok, err := s.Meta(ctx, nsub)
	if err != nil || !ok {
		t.Fatalf("Meta(%s) = %v, %v", nsub, ok, err)
	}
	diff(t, "moved meta", store.Meta{Key: nsub, Workspace: to, ForkOf: nkey, Created: t0}, m)
	checkSessions(t, s, store.ProjectKey(from)+"/", nil)
	if text, ok, err := s.Summary(ctx, nkey); err != nil || !ok || text != "handoff" {
		t.Errorf("Summary(%s) = %q, %v, %v; want the handoff", nkey, text, ok, err)
	}
	run.Workspace = to
	diff(t, "runs of the new path", []store.Run{run}, runsOf(t, s, to))
	diff(t, "runs of the old path", []store.Run(nil), runsOf(t, s, from))
	diff(t, "lineage of the new path", store.Lineage{Workspace: to, Woke: 1, Steps: map[string]string{"work": "s1"}}, lineage(t, s, to))
	diff(t, "lineage of the old path", store.Lineage{Workspace: from}, lineage(t, s, from))
	diff(t, "lineage of the neighbour", store.Lineage{Workspace: other, Steps: map[string]string{"work": "o1"}}, lineage(t, s, other))
	if hasEvents {
		got, err := ev.EventsAfter(ctx, store.SideLog(to, store.EventLog), 0, 10)
		if err != nil || len(got) != 2 {
			t.Errorf("events of the moved stream: %d, %v; want 2", len(got), err)
		}
	}

	if err := mv.Move(ctx, from, to); err != nil {
		t.Errorf("a second Move = %v, want nil (nothing left to move)", err)
	}
	if err := mv.Move(ctx, other, to); !errors.Is(err, store.ErrMoveTarget) {
		t.Errorf("Move onto a path with state = %v, want ErrMoveTarget", err)
	}
	diffEntries(t, okey, mustLoad(t, s, okey), chain(okey, 0, 1))
}

func runsOf(t *testing.T, s store.Store, ws string) []store.Run {
	t.Helper()
	rs, err := s.Runs(context.Background(), ws)
	if err != nil {
		t.Fatalf("Runs(%q): %v", ws, err)
	}
	return rs
}

// testMoveShared: a workspace whose keys another one's records share
// (/w/a_b and /w/a-b: ProjectKey reads them alike) is not moved, and
// neither loses anything (ErrMoveShared): re-keying its sessions would
// have taken the other's along.
func testMoveShared(t *testing.T, s store.Store) {
	mv := s.(store.Mover)
	ctx := context.Background()
	const from, other, to = "/w/a_b", "/w/a-b", "/w/c"
	key, okey := store.SessionKey(from, "s1"), store.SessionKey(other, "o1")
	run := fullRun(t)
	run.Workspace = other
	mustCommit(t, s, store.Batch{Meta: []store.Meta{{Key: key, Workspace: from, Created: t0}}, Entries: chain(key, 0, 2)})
	mustCommit(t, s, store.Batch{Run: &run, Meta: []store.Meta{{Key: okey, Workspace: other, Created: t0}}, Entries: chain(okey, 0, 1)})
	if err := mv.Move(ctx, from, to); !errors.Is(err, store.ErrMoveShared) || !strings.Contains(err.Error(), other) {
		t.Fatalf("Move of a path whose keys %s shares = %v, want ErrMoveShared naming it", other, err)
	}
	diffEntries(t, key, mustLoad(t, s, key), chain(key, 0, 2))
	diffEntries(t, okey, mustLoad(t, s, okey), chain(okey, 0, 1))
	diff(t, "runs of the other path", []store.Run{run}, runsOf(t, s, other))
	checkSessions(t, s, store.ProjectKey(to)+"/", nil)
}
