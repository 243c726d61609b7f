package agent_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model/anthropic"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// gatedLoad is the workspace's store, whose load of a whole session waits
// until gate is closed: a wake that asks the model only once its session
// has loaded never gets past it.
type gatedLoad struct {
	*sqlite.DB
	gate chan struct{}
}

func (g *gatedLoad) LoadHeads(ctx context.Context, key string, over, head int) ([]store.Entry, error) {
	select {
	case <-g.gate:
	case <-time.After(guard): // a failure, not a wait: the gate opens at once when the test passes
		return nil, errors.New("the wake waited for its session before asking the model")
	}
	return g.DB.LoadHeads(ctx, key, over, head)
}

const guard = 20 * time.Second

// cutRig is a fixture whose store holds a realistic session of 300
// entries cut mid-work (its last entry a result), under id, with a
// directory for snapshots and the provider every wake uses.
type cutRig struct {
	f         *fixture
	id, views string
	p         *anthropic.Provider
}

func cutWorkspace(t *testing.T, answer modeltest.Responder) *cutRig {
	t.Helper()
	f := newFixture(t, answer)
	c := &cutRig{f: f, id: "cut", views: t.TempDir(), p: anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: f.srv.URL})}
	key := store.SessionKey(f.ws, c.id)
	es := realisticSession(key, 300)
	if err := openStore(t, f.ws).Commit(context.Background(), store.Batch{Entries: es,
		Meta: []store.Meta{{Key: key, Model: "claude-sonnet-4-6", Workspace: f.ws, Created: time.Now()}}}); err != nil {
		t.Fatal(err)
	}
	return c
}

// wake resumes the session on st (nil: the workspace's store), arm having
// set the fake up for the run.
func (c *cutRig) wake(arm func(), st store.Store) agent.Result {
	c.f.t.Helper()
	arm()
	if st == nil {
		st = openStore(c.f.t, c.f.ws)
	}
	c.f.rt = c.f.runtimeWith(agent.Options{Trim: true, Store: st, Views: c.views, Provider: c.p, Tools: sizedTools()})
	return c.f.run(hotSpec, "", agent.RunOptions{Resume: c.id})
}

// lookThenFail answers the first request of each run (as numbered by
// run) with a call of Look and the next with a 400, which ends the run:
// each run adds a response and its result to the session.
type lookThenFail struct {
	mu     sync.Mutex // guards looked
	looked bool
}

func (l *lookThenFail) next() { l.mu.Lock(); l.looked = false; l.mu.Unlock() }

// failNext makes the next run's first call fail: the run adds no response.
func (l *lookThenFail) failNext() { l.mu.Lock(); l.looked = true; l.mu.Unlock() }

func (l *lookThenFail) answer(*modeltest.Request) modeltest.Turn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.looked {
		return modeltest.Turn{Fault: &modeltest.Fault{Status: 400, Message: "stop here"}}
	}
	l.looked = true
	return modeltest.Turn{Text: "Looking further.", ToolCalls: []modeltest.ToolCall{call("Look", `{"path":"src/next.go"}`)}}
}

// TestWakeAsksBeforeItLoads (issue 12): the first wake of a session keeps
// a snapshot of its view; the next wake sends its first request from it
// before the session has loaded (the store holds the load until the model
// has the request), and the run's first call takes that answer, since it
// built the same request byte for byte: the model is asked once.
func TestWakeAsksBeforeItLoads(t *testing.T) {
	l := &lookThenFail{}
	c := cutWorkspace(t, l.answer)
	f, views, p := c.f, c.views, c.p
	c.wake(l.next, nil) // no snapshot yet: it writes one
	if hits, misses := p.Speculations(); hits+misses != 0 {
		t.Fatalf("a wake without a snapshot speculated: %d, %d", hits, misses)
	}
	snaps, _ := filepath.Glob(filepath.Join(views, "*.view"))
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots after the first wake, want 1", len(snaps))
	}
	first, _ := os.ReadFile(snaps[0])

	for round := range 2 {
		g := &gatedLoad{DB: openStore(t, f.ws).(*sqlite.DB), gate: make(chan struct{})}
		var once sync.Once
		f.srv.OnRequest(func(*modeltest.Request) { once.Do(func() { close(g.gate) }) })
		before := f.srv.Count()
		c.wake(l.next, g)
		if hits, misses := p.Speculations(); hits != int64(round+1) || misses != 0 {
			t.Fatalf("round %d: speculations taken %d, abandoned %d; want %d and 0", round, hits, misses, round+1)
		}
		if n := f.srv.Count() - before; n != 2 { // the call taken ahead, then the 400
			t.Fatalf("round %d: the model was asked %d times, want 2", round, n)
		}
	}
	if now, _ := os.ReadFile(snaps[0]); bytes.Equal(now, first) {
		t.Fatal("the snapshot was not moved to the newer cut")
	}
}

// TestStaleSnapshotCostsARequestNotTheTruth: a snapshot that no longer
// matches the session (here: forged) makes the wake send a request that
// the first call does not take; the call sends its own, the answer to
// the wrong one is never stored, and the wake writes a good snapshot.
func TestStaleSnapshotCostsARequestNotTheTruth(t *testing.T) {
	l := &lookThenFail{}
	c := cutWorkspace(t, func(r *modeltest.Request) modeltest.Turn {
		if bytes.Contains(r.Body, []byte("Now stap")) {
			return modeltest.Turn{Text: "FORGED"}
		}
		return l.answer(r)
	})
	f, id, views, p := c.f, c.id, c.views, c.p
	c.wake(l.next, nil)
	snaps, _ := filepath.Glob(filepath.Join(views, "*.view"))
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots, want 1", len(snaps))
	}
	data, _ := os.ReadFile(snaps[0])
	forged := bytes.Replace(data, []byte("Now step"), []byte("Now stap"), 1)
	if bytes.Equal(forged, data) {
		t.Fatal("nothing to forge in the snapshot")
	}
	if err := os.WriteFile(snaps[0], forged, 0o600); err != nil {
		t.Fatal(err)
	}
	c.wake(l.next, nil)
	if hits, misses := p.Speculations(); hits != 0 || misses != 1 {
		t.Fatalf("speculations taken %d, abandoned %d; want 0 and 1", hits, misses)
	}
	for _, e := range f.entries(id) {
		if e.Message != nil && strings.Contains(e.Message.TextOf(), "FORGED") {
			t.Fatal("the answer to the forged request was stored")
		}
	}
	if again, _ := os.ReadFile(snaps[0]); bytes.Contains(again, []byte("Now stap")) {
		t.Fatal("the forged snapshot was kept")
	}
	c.wake(l.next, nil)
	if hits, misses := p.Speculations(); hits != 1 || misses != 1 {
		t.Fatalf("after the snapshot was written again: taken %d, abandoned %d; want 1 and 1", hits, misses)
	}
}

// TestNoSpeculationWithCallsPending: when the session's last response has
// a call without a result, the wake runs it before asking the model, so
// it sends nothing ahead.
func TestNoSpeculationWithCallsPending(t *testing.T) {
	l := &lookThenFail{}
	c := cutWorkspace(t, l.answer)
	f, id, p := c.f, c.id, c.p
	c.wake(l.next, nil)
	key := store.SessionKey(f.ws, id)
	es := f.entries(id)
	pending := realisticResponse(9999)
	pending.Key, pending.UUID, pending.Parent = key, key+"#pending", es[len(es)-1].UUID
	if err := openStore(t, f.ws).Commit(context.Background(), store.Batch{Entries: []store.Entry{pending}}); err != nil {
		t.Fatal(err)
	}
	c.wake(l.next, nil)
	if hits, misses := p.Speculations(); hits+misses != 0 {
		t.Fatalf("speculated with a call pending: taken %d, abandoned %d", hits, misses)
	}
}

// TestForgedSnapshotAtTheSameCutIsWrittenAgain: when the session did not
// move past the snapshot's cut (the last wake's first call failed), a
// snapshot whose messages are wrong is still replaced, not trusted again.
func TestForgedSnapshotAtTheSameCutIsWrittenAgain(t *testing.T) {
	l := &lookThenFail{}
	c := cutWorkspace(t, l.answer)
	views, p := c.views, c.p
	c.wake(l.next, nil)
	c.wake(l.failNext, nil) // the snapshot at the session's newest cut
	snaps, _ := filepath.Glob(filepath.Join(views, "*.view"))
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots, want 1", len(snaps))
	}
	good, _ := os.ReadFile(snaps[0])
	if hits, misses := p.Speculations(); hits != 1 || misses != 0 { // an older cut joins as well
		t.Fatalf("speculations taken %d, abandoned %d; want 1 and 0", hits, misses)
	}
	if err := os.WriteFile(snaps[0], bytes.Replace(good, []byte("Now step"), []byte("Now stap"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	c.wake(l.failNext, nil) // the call fails: the cut stays
	if hits, misses := p.Speculations(); hits != 1 || misses != 1 {
		t.Fatalf("speculations taken %d, abandoned %d; want 1 and 1", hits, misses)
	}
	if again, _ := os.ReadFile(snaps[0]); !bytes.Equal(again, good) {
		t.Fatal("the forged snapshot was not written again")
	}
	c.wake(l.failNext, nil)
	if hits, misses := p.Speculations(); hits != 2 || misses != 1 {
		t.Fatalf("then: taken %d, abandoned %d; want 2 and 1", hits, misses)
	}
}

// TestRunKeepsTheSnapshot (issue 12): a session's first run keeps its
// snapshot as it goes, so the wake after it stopped (here: a 400 ends it
// mid-work, as a crash would) sends its first request before loading,
// and takes the answer; the snapshot the run left is the one the wake
// would write, so the wake only appends to it.
func TestRunKeepsTheSnapshot(t *testing.T) {
	var mu sync.Mutex
	looks := 0
	f := newFixture(t, func(r *modeltest.Request) modeltest.Turn {
		mu.Lock()
		defer mu.Unlock()
		if looks++; looks%8 == 0 { // every eighth request ends its run
			return modeltest.Turn{Fault: &modeltest.Fault{Status: 400, Message: "stop here"}}
		}
		return modeltest.Turn{Text: "Looking further.", ToolCalls: []modeltest.ToolCall{call("Look", fmt.Sprintf(`{"path":"src/f%d.go"}`, looks))}}
	})
	views := t.TempDir()
	p := anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: f.srv.URL})
	f.rt = f.runtimeWith(agent.Options{Trim: true, Views: views, Provider: p, Tools: sizedTools()})
	first := f.run(hotSpec, "Read the code.", agent.RunOptions{})
	if first.OK || first.Turns != 7 {
		t.Fatalf("first run: %d turns, ok %v; want 7 and a failure", first.Turns, first.OK)
	}
	snaps, _ := filepath.Glob(filepath.Join(views, "*.view"))
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots after the first run, want 1", len(snaps))
	}
	before, _ := os.Stat(snaps[0])
	for round := range 2 {
		g := &gatedLoad{DB: openStore(t, f.ws).(*sqlite.DB), gate: make(chan struct{})}
		var once sync.Once
		f.srv.OnRequest(func(*modeltest.Request) { once.Do(func() { close(g.gate) }) })
		f.rt = f.runtimeWith(agent.Options{Trim: true, Views: views, Provider: p, Tools: sizedTools(), Store: g})
		f.run(hotSpec, "", agent.RunOptions{Resume: first.SessionID})
		if hits, misses := p.Speculations(); hits != int64(round+1) || misses != 0 {
			t.Fatalf("wake %d: speculations taken %d, abandoned %d; want %d and 0", round, hits, misses, round+1)
		}
	}
	if after, err := os.Stat(snaps[0]); err != nil || !os.SameFile(before, after) {
		t.Fatalf("the wakes wrote the snapshot anew (%v): the run left it stale", err)
	}
}

// TestDenialsNeverCostARequest: a later load drops all but the newest
// denial, which rewrites messages a snapshot may hold: across runs that
// deny calls now and then, no wake sends a request its first call does
// not take.
func TestDenialsNeverCostARequest(t *testing.T) {
	var mu sync.Mutex
	run, asked := 0, 0
	c := cutWorkspace(t, func(r *modeltest.Request) modeltest.Turn {
		mu.Lock()
		defer mu.Unlock()
		switch asked++; {
		case asked > 2:
			return modeltest.Turn{Fault: &modeltest.Fault{Status: 400, Message: "stop here"}}
		case run%3 == 1 || run%3 == 2 && asked == 2:
			return modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Forbidden", `{}`)}}
		}
		return modeltest.Turn{Text: "Looking further.", ToolCalls: []modeltest.ToolCall{call("Look", `{"path":"src/next.go"}`)}}
	})
	f, id, p := c.f, c.id, c.p
	next := func() { mu.Lock(); run, asked = run+1, 0; mu.Unlock() }
	for range 9 {
		c.wake(next, nil)
		if _, misses := p.Speculations(); misses != 0 {
			t.Fatalf("run %d: a speculation was abandoned", run)
		}
	}
	if hits, _ := p.Speculations(); hits < 2 { // denials keep the others from joining
		t.Fatalf("only %d of 9 wakes sent their request ahead", hits)
	}
	denied := 0
	for _, e := range f.entries(id) {
		if e.Op != nil && e.Op.Denied {
			denied++
		}
	}
	if denied < 4 {
		t.Fatalf("%d denials: the test shows nothing", denied)
	}
}
