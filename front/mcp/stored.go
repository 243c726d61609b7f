package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/web"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// stored is the task of a directory that this process does not drive:
// a task's own process (task_start's), flower at a terminal, a worker.
// Everything the tools say about it and do to it goes through the
// directory's store, the way flower serve --runs steers any run
// (web.Stored): the asks and the person's answers, notes and interrupts
// are records of the workspace's human journal, which the driver
// follows; the events are the workspace's stored stream. So a later
// session, or another client, sees and steers the task as well as the
// session that started it.
type stored struct {
	dir, runDir, url string
}

func (s *Server) stored(dir string) stored {
	return stored{dir: dir, runDir: s.runDir(dir), url: s.opts.StoreURL}
}

// runDir is the directory's run dir, as Options.RunDir chooses it.
func (s *Server) runDir(dir string) string {
	if s.opts.RunDir != nil {
		if d := s.opts.RunDir(dir); d != "" {
			return d
		}
	}
	return defaultRunDir(dir)
}

// look is what the store says of a directory's task now.
type look struct {
	db   web.DB
	run  store.Run
	live bool         // a process holds the directory's lease
	who  store.Holder // that process
}

// errNoTask is a directory no flower ever ran in.
var errNoTask = errors.New("no task")

// open opens the directory's store, reading only; closeDB closes it.
func (x stored) open(ctx context.Context) (db web.DB, closeDB func(), err error) {
	st, err := flower.ReadStore(ctx, x.runDir, x.url)
	if err != nil {
		return nil, nil, fmt.Errorf("read the store of %s: %w", x.dir, err)
	}
	if st == nil {
		return nil, nil, fmt.Errorf("%w in %s: task_start first", errNoTask, x.dir)
	}
	db, ok := st.(web.DB)
	if !ok {
		db = sqliteDB{Store: st}
	}
	return db, func() { st.Close() }, nil
}

// find finds the task in db: the newest run in flight, else the newest
// run, and whether a process drives it. A process that holds the
// directory before its run is created is a task starting.
func (x stored) find(ctx context.Context, db web.DB) (look, error) {
	runs, err := db.Runs(ctx, x.dir)
	if err != nil {
		return look{}, err
	}
	var st store.Store = db
	if s, ok := db.(sqliteDB); ok {
		st = s.Store // flower.Holder tells the backends apart by the store
	}
	l := look{db: db, run: store.Run{Workspace: x.dir}}
	l.who, l.live = flower.Holder(ctx, st, x.runDir, x.dir)
	if len(runs) == 0 && !l.live {
		return look{}, fmt.Errorf("%w in %s: task_start first", errNoTask, x.dir)
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Status == store.RunInFlight || i == len(runs)-1 {
			l.run = runs[i]
		}
		if runs[i].Status == store.RunInFlight {
			break
		}
	}
	return l, nil
}

// with runs fn on the task as the store says it is now.
func (x stored) with(ctx context.Context, fn func(look) error) error {
	db, closeDB, err := x.open(ctx)
	if err != nil {
		return err
	}
	defer closeDB()
	l, err := x.find(ctx, db)
	if err != nil {
		return err
	}
	return fn(l)
}

// sqliteDB is a run dir's SQLite store as web.Stored steers it: its lease
// is the run dir's file lock, and nothing notifies its driver, which
// reads its journal every poll instead.
type sqliteDB struct {
	store.Store
	sqlite.Dirs
}

func (sqliteDB) Notify(context.Context, string, string) error { return nil }

func (d sqliteDB) AppendEvents(ctx context.Context, evs ...store.Event) error {
	return d.events().AppendEvents(ctx, evs...)
}

func (d sqliteDB) EventsAfter(ctx context.Context, stream string, after int64, limit int) ([]store.Event, error) {
	return d.events().EventsAfter(ctx, stream, after, limit)
}

func (d sqliteDB) LastEvent(ctx context.Context, stream string) (int64, error) {
	return d.events().LastEvent(ctx, stream)
}

// events are the store's stored streams; a store that keeps none reads
// as empty.
func (d sqliteDB) events() store.Events {
	if e, ok := d.Store.(store.Events); ok {
		return e
	}
	return noEvents{}
}

type noEvents struct{}

func (noEvents) AppendEvents(context.Context, ...store.Event) error { return nil }
func (noEvents) EventsAfter(context.Context, string, int64, int) ([]store.Event, error) {
	return nil, nil
}
func (noEvents) LastEvent(context.Context, string) (int64, error) { return 0, nil }

// driven reports whether a process drives the task now. A live lease with
// no run in flight is a task starting (its process holds the directory
// before its run is created) or ending (its run finished, its process
// closing).
func (l look) driven() bool { return l.live }

func (l look) steer() web.Stored {
	r := l.run
	if l.live && r.Status != store.RunInFlight {
		r.Status = store.RunInFlight // starting: its journal is followed already
	}
	return web.Stored{DB: l.db, Run: r}
}

// status is task_status for a task driven elsewhere: its cost and turns
// are those of the steps finished so far.
func (x stored) status(ctx context.Context) (st Status, err error) {
	err = x.with(ctx, func(l look) error {
		st = l.status(ctx, x.dir)
		return nil
	})
	return st, err
}

func (l look) status(ctx context.Context, dir string) Status {
	r := l.run
	st := Status{Directory: dir, Run: r.ID, Step: cmp.Or(r.Row, r.Step)}
	if st.Step == "" && len(r.Done) > 0 {
		st.Step = r.Done[len(r.Done)-1]
	}
	if rows, err := l.db.Results(ctx, r.ID); err == nil {
		for _, row := range rows {
			st.CostUSD += row.CostUSD
			st.Turns += row.NumTurns
		}
	}
	if n, err := l.db.LastEvent(ctx, store.SideLog(dir, store.EventLog)); err == nil {
		st.LastSeq = int(n)
	}
	switch {
	case l.driven():
		st.State, st.DriverPID = StateRunning, l.who.PID
		asks, _ := l.steer().Asks(ctx)
		now := time.Now()
		for _, a := range asks {
			st.Questions = append(st.Questions, Question{ID: a.ID, Question: a.Question, Options: a.Options, WaitedS: a.WaitedS(now)})
		}
		if len(st.Questions) > 0 {
			st.State = StateWaiting
		}
	case r.Status == store.RunInFlight:
		st.State = StateStopped
		st.Message = fmt.Sprintf("stopped: nothing drives run %s now (its process ended); task_start without a task, or flower in %s, continues it where it stopped", r.ID, dir)
	case r.Outcome == "passed":
		st.State = StatePassed
		st.Message = fmt.Sprintf("passed: the verdict passed · run %s · %s", r.ID, model.USD(st.CostUSD))
	default:
		st.State = StateFailed
		st.Message = fmt.Sprintf("failed: run %s ended %s · %s\n%s\ntask_start again to keep working, or with a task saying what to change",
			r.ID, cmp.Or(r.Outcome, string(r.Status)), model.USD(st.CostUSD), strings.TrimSpace(r.Findings))
	}
	return st
}

// pollEvery is how often task_events with wait_s reads a store that
// cannot notify (SQLite) for new events.
const pollEvery = 200 * time.Millisecond

// events is task_events for a task driven elsewhere, from the stored
// stream, which keeps every event but deltas (all shows no deltas here).
// It is over (Ended) once nothing drives the task.
func (x stored) events(ctx context.Context, q query, wait time.Duration) (Events, error) {
	db, closeDB, err := x.open(ctx)
	if err != nil {
		return Events{}, err
	}
	defer closeDB()
	deadline := time.Now().Add(min(max(wait, 0), maxWait))
	for {
		l, err := x.find(ctx, db)
		if err != nil {
			return Events{}, err
		}
		evs, gap, err := l.steer().Events(ctx, q.after)
		if err != nil {
			return Events{}, fmt.Errorf("read the events of %s: %w", x.dir, err)
		}
		out := page(evs, gap, q)
		out.State = l.status(ctx, x.dir).State
		out.Ended = !l.driven() && !out.More
		if len(out.Events) > 0 || out.Ended || out.More || !time.Now().Before(deadline) {
			return out, nil
		}
		q.after = out.Last // nothing shown yet: what was left out stays out
		select {
		case <-time.After(min(pollEvery, time.Until(deadline))):
		case <-ctx.Done():
			return out, nil
		}
	}
}

// answer settles question id through the journal: the driver applies it
// within its poll.
func (x stored) answer(ctx context.Context, id, text string) error {
	return x.with(ctx, func(l look) error {
		if !l.driven() {
			return x.notRunning(ctx, l)
		}
		ok, err := l.steer().Answer(ctx, id, text)
		if err != nil || !ok {
			return cmp.Or(err, notWaiting(id))
		}
		return nil
	})
}

func (x stored) note(ctx context.Context, text string) error {
	return x.post(ctx, func(r web.Stored) error { return r.Send(ctx, text) })
}

func (x stored) interrupt(ctx context.Context, text string) error {
	return x.post(ctx, func(r web.Stored) error { return r.Interrupt(ctx, text) })
}

// post appends a record for the driver of the task, which must have one.
func (x stored) post(ctx context.Context, do func(web.Stored) error) error {
	return x.with(ctx, func(l look) error {
		if !l.driven() {
			return x.notRunning(ctx, l)
		}
		return do(l.steer())
	})
}

func (x stored) notRunning(ctx context.Context, l look) error {
	return fmt.Errorf("the task in %s is not running (%s)", x.dir, l.status(ctx, x.dir).State)
}

func notWaiting(id string) error {
	return fmt.Errorf("question %q is not waiting (answered, timed out, or never asked): task_status lists the questions waiting", id)
}
