package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
	"github.com/flower-run/flower/view"
)

// session is the state of one Run: the stored entries and what the loop has
// done with them so far.
type session struct {
	rt      *Runtime
	spec    Spec
	opts    RunOptions
	id, key string
	entries []store.Entry
	old     int // entries that existed before this run: the pruned view may expire or trim them
	info    model.Info
	res     *Result
	allowed map[string]bool // nil: every tool allowed
	reg     tool.Registry   // the tools this session sees now (refreshTools)
	step    string          // the top-level Spec.Name: resume policies are the step's
	top     bool            // a top-level run: it takes interrupts
	warned  bool            // the handoff "approaching" event was sent
	pending int             // bytes appended since the last model response, not yet in res.Context
	// held are results of calls without an intent, not yet durable: the
	// next commit carries them (see runTools). world are those of world
	// calls (tool.World): only a commit past the tool turn carries them
	// (carriesWorld), so a crash before the model saw them runs the calls
	// again on resume instead of replaying a page that may have changed
	// (R5.2, seed 002).
	held, world []store.Entry
	// intents are the calls whose intent the response's commit recorded.
	intents map[string]bool
	// meta is a new session's metadata until it commits with the
	// session's first entries.
	meta *store.Meta
	// ahead is the prompt's commit while it is under way, aheadErr its
	// failure, kept: nothing may commit after a lost prompt (overlap.go).
	ahead    chan error
	aheadErr error

	view *view.Builder   // the model's view of entries, kept between calls
	memo *model.Memo     // the provider's conversions of the view
	defs []model.ToolDef // the tools offered, listed once per run
	// project is the project's standing instructions, read when the Run
	// started (see Options.Instructions).
	project string
	// stopHookActive: a Stop hook has already kept this run going (the
	// hook's stop_hook_active).
	stopHookActive bool
}

// open loads the session to continue, forks it, or starts a new one.
func (r *Runtime) open(ctx context.Context, spec Spec, opts RunOptions, res *Result) (*session, error) {
	s := &session{rt: r, spec: spec, opts: opts, res: res, step: opts.step, top: opts.subPath == "",
		intents: map[string]bool{}}
	if s.step == "" {
		s.step = spec.Name
	}
	s.info, _ = model.Lookup(spec.Model)
	s.project = r.projectInstructions()
	if spec.Tools != nil {
		s.allowed = map[string]bool{}
		for _, n := range spec.Tools {
			s.allowed[n] = true
		}
	}
	s.refreshTools(ctx) // before a crash's pending calls look their tools up
	s.id = opts.Resume
	if s.id == "" {
		s.id = r.newID()
	}
	s.key = r.key(s.id, opts.subPath)
	s.memo = &model.Memo{}
	entries, err := r.load(ctx, s.key, opts.Fork)
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", s.id, err)
	}
	if opts.Resume != "" && opts.subPath == "" && len(entries) == 0 {
		return nil, fmt.Errorf("no session %s in this workspace's store", opts.Resume)
	}
	// Room for the run's entries now, so that no turn pays for copying the
	// loaded session when the first append outgrows it.
	s.entries, s.old = slices.Grow(entries, 256), len(entries)
	res.Resumed = len(entries) > 0
	if !res.Resumed {
		s.newMeta("")
		return s, nil
	}
	if opts.Fork {
		if err := s.fork(ctx); err != nil {
			return s, err
		}
	}
	return s, s.follow(ctx)
}

// newMeta describes a new session; its first commit writes it, so a crash
// never leaves metadata without entries, and it costs no commit of its own.
func (s *session) newMeta(forkOf string) {
	s.meta = &store.Meta{Key: s.key, Agent: s.spec.Name, Model: s.spec.Model,
		Workspace: s.rt.workspace, ForkOf: forkOf, Created: s.rt.now()}
}

// metaBatch is b with the metadata not yet committed.
func (s *session) metaBatch(b store.Batch) store.Batch {
	if s.meta != nil {
		b.Meta = append(b.Meta, *s.meta)
	}
	return b
}

// fork copies the session under a new id with fresh entry ids, leaving the
// original untouched.
func (s *session) fork(ctx context.Context) error {
	from := s.id
	s.id = s.rt.newID()
	s.key = s.rt.key(s.id, s.opts.subPath)
	ids := map[string]string{}
	copies := make([]store.Entry, len(s.entries))
	for i, e := range s.entries {
		ids[e.UUID] = s.rt.newID()
		e.UUID, e.Parent, e.Key, e.Seq = ids[e.UUID], ids[e.Parent], s.key, 0
		copies[i] = e
	}
	s.newMeta(from)
	if err := s.rt.store.Commit(ctx, s.metaBatch(store.Batch{Entries: copies})); err != nil {
		return fmt.Errorf("fork session %s: %w", from, err)
	}
	s.entries, s.meta = copies, nil
	return nil
}

// append makes entries durable, chained after the last one, and keeps them.
func (s *session) append(ctx context.Context, entries ...store.Entry) error {
	return s.appendWith(ctx, store.Batch{}, entries...)
}

// bound is what the workflow commits with this session's prompt.
func (s *session) bound() store.Batch {
	if s.opts.With == nil {
		return store.Batch{}
	}
	b := s.opts.With(s.id)
	b.Entries = nil
	return b
}

// appendWith is append in one transaction with the records of b (its
// Entries, under other keys, commit as they are). The held
// results go first, in the order their calls were made, except that a
// world call's wait for a commit past the tool turn (carriesWorld); a view
// answers the calls in their order whatever the store's. A commit that
// fails loses them as a crash would, and the resume runs their calls again.
func (s *session) appendWith(ctx context.Context, b store.Batch, entries ...store.Entry) error {
	if err := s.settle(); err != nil { // a commit under way goes first (overlap.go)
		return err
	}
	entries, b, held := s.chain(b, entries)
	// The store must not see a cancelled context: an entry whose effect
	// happened has to be recorded even while the run is being interrupted.
	if err := s.rt.store.Commit(context.WithoutCancel(ctx), s.metaBatch(b)); err != nil {
		return fmt.Errorf("append to session %s: %w", s.id, err)
	}
	s.meta = nil
	for range held {
		failpoint.Hit("after-result") // a held result is durable from here
	}
	s.entries = append(s.entries, entries...)
	s.countPending(entries)
	return nil
}

// chain takes the held results and entries, in that order, as the next
// entries of the session: ids, parents, times. It returns them, b with
// them in front of b's own entries, and how many held results they carry.
func (s *session) chain(b store.Batch, entries []store.Entry) ([]store.Entry, store.Batch, int) {
	carried := s.held
	if carriesWorld(entries) {
		carried = append(carried, s.world...)
		s.world = nil
	}
	held := len(carried)
	entries = append(carried, entries...)
	s.held = nil
	parent := ""
	if n := len(s.entries); n > 0 {
		parent = s.entries[n-1].UUID
	}
	for i := range entries {
		e := &entries[i]
		e.UUID, e.Parent, e.Key = s.rt.newID(), parent, s.key
		if e.Time.IsZero() { // a held result keeps the time it was made
			e.Time = s.rt.now()
		}
		parent = e.UUID
	}
	b.Entries = append(entries[:len(entries):len(entries)], b.Entries...) // b's own: other keys (a mail delivery's mark)
	return entries, b, held
}

// carriesWorld reports whether a commit of entries takes the held results
// of world calls: a flush (no entries), or one that goes past the tool
// turn (a response, a prompt, a note, an interrupt, a handoff). An
// effect's result or attempt, a hook decision or a failed model call
// leaves them held: the model has not seen them yet.
func carriesWorld(entries []store.Entry) bool {
	if len(entries) == 0 {
		return true
	}
	for _, e := range entries {
		switch e.Kind {
		case store.KindResult, store.KindAttempt, store.KindOpStarted, store.KindHook, store.KindAPIError:
		default:
			return true
		}
	}
	return false
}

// hold keeps the result of a call without an intent for the next commit;
// a world call's for the next commit past the tool turn.
func (s *session) hold(e store.Entry, world bool) {
	e.Time = s.rt.now()
	if world {
		s.world = append(s.world, e)
		return
	}
	s.held = append(s.held, e)
}

// unsaved are the held results, in the order they will commit.
func (s *session) unsaved() []store.Entry {
	if len(s.world) == 0 { // the common case: no copy per request
		return s.held
	}
	return slices.Concat(s.held, s.world)
}

// flush makes the held results durable.
func (s *session) flush(ctx context.Context) error {
	if len(s.held)+len(s.world) == 0 {
		return nil
	}
	return s.append(ctx)
}

// countPending tracks the size of what the next request adds to the last
// response's context; a model response resets it, since its usage
// measures everything before it.
func (s *session) countPending(entries []store.Entry) {
	for _, e := range entries {
		switch {
		case e.Kind == store.KindAssistant:
			s.pending = 0
		case e.Op != nil && e.Kind == store.KindResult:
			s.pending += len(e.Op.Content)
		case e.Message != nil:
			s.pending += len(e.Message.TextOf())
		}
	}
}

// emit sends an event to the sink, marked when this is a subagent. A
// panicking sink is recovered: a consumer never harms the run (R6.9).
func (s *session) emit(e event.Event) {
	sink := s.opts.Sink
	if sink == nil {
		return
	}
	if s.opts.subagent != "" {
		p := map[string]any{"subagent": s.opts.subagent}
		for k, v := range e.Payload {
			p[k] = v
		}
		e.Payload = p
	}
	defer func() { _ = recover() }()
	sink(e)
}

func userText(text string) store.Entry {
	return store.Entry{Kind: store.KindUser, Message: &model.Message{Role: model.User,
		Content: []model.Block{&model.Text{Text: text}}}}
}
