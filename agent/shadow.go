package agent

import (
	"context"
	"math"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/view"
)

// speculate sends the request a snapshot of the session's view predicts,
// before the session loads (snapshot.go). It does nothing, and costs
// nothing but an open, unless everything it needs is there: a resumed
// top-level session continued without a new prompt, trimming on (a
// snapshot shows old results trimmed), a provider that can speculate, a
// store that loads heads, and a snapshot of this key that the entries
// from its cut on join (view.Cut.Joins). It sends nothing when the run
// would not begin with a model request of that view: calls pending, an
// interrupt's note, a handoff, mail waiting, an ended turn.
func (s *session) speculate(ctx context.Context, prompt string) {
	r := s.rt
	sp, ok := r.provider.(model.Speculator)
	heads, hok := r.store.(store.Heads)
	if !ok || !hok || r.views == "" || !r.trim || prompt != "" || s.opts.Resume == "" || s.opts.Fork || !s.top ||
		len(r.sources) > 0 && s.mayUseSources() || !s.mailEmpty() {
		return
	}
	snap := r.openView(s.key, sp.Format())
	if snap == nil {
		return
	}
	sent := false
	defer func() {
		if !sent {
			snap.f.Close()
		}
	}()
	over, head := (&view.Trim{}).Heads()
	tail, err := heads.LoadHeadsFrom(ctx, s.key, snap.head.CutUUID, over, head)
	if err != nil || len(tail) == 0 || !(view.Cut{Denied: snap.head.Denied}).Joins(tail) {
		return
	}
	p, err := resume.Session(tail)
	if err != nil || len(p.Pending) > 0 || p.Note != "" || p.Ended || p.Handoff != nil || p.Interrupted ||
		handingOff(tail) || s.wouldHandOff(p) {
		return
	}
	s.rt.listSpills()
	whole := func(op *store.Op) error { return s.wholeOf(tail, op) }
	spill := func(op *store.Op) (string, error) { return r.spill(op, whole) }
	msgs := view.NewBuilder(tail, laterLoad(spill, true)).Messages()
	s.rt.seal()
	if len(msgs) == 0 {
		return
	}
	req := &model.Request{Model: s.spec.Model, System: s.system(), Messages: msgs, Tools: s.toolDefs(), Memo: s.memo}
	cancel, err := sp.Speculate(ctx, req, snap.msgs)
	if err == nil {
		s.unspeculate, s.snap, sent = cancel, snap, true
	}
}

// laterLoad is the view options of a later load of a session's entries
// from its start or, joined, from a cut on: every entry is old, and the
// large results are trimmed, spill giving the path of their text.
func laterLoad(spill func(*store.Op) (string, error), joined bool) view.Options {
	return view.Options{KeepDenials: 1, Old: math.MaxInt, Settled: true, Joined: joined,
		Trim: &view.Trim{Spill: spill}}
}

// spillLater is the spill of a later load, as the shadow sees it: the path
// the text will be in. The wake that builds the view writes the file (its
// first call's view, before the model can ask to read it); a file it
// could not write makes its request differ from the snapshot's, which
// costs the request sent ahead and nothing else.
func spillLater(op *store.Op) (string, error) { return spillPath(op), nil }

// wouldHandOff reports whether the loop's first act would be a handoff,
// judged by the last response's context as maybeHandoff judges it.
func (s *session) wouldHandOff(p resume.Plan) bool {
	if s.rt.handoffAt < 0 || s.info.Window == 0 || p.Last == nil || p.Last.Usage == nil {
		return false
	}
	return p.Last.Usage.Context() >= s.handoffAt()
}

// mailEmpty reports whether the loop's first act surely delivers no
// mail: the session gets none, or the mailbox can tell that none waits.
func (s *session) mailEmpty() bool {
	mb := s.rt.mail
	if mb == nil || !s.mayUse(s.rt.mailTool) {
		return true
	}
	w, ok := mb.(interface{ Waiting() bool })
	return ok && !w.Waiting()
}

// shadow keeps a session's snapshot as a later load would build it, while
// the run appends to the session: the view of the entries from the
// snapshot's last cut on, extended after each response, and the file the
// messages that become stable are appended to. A denial stops it (a
// later load drops older denials, which the view kept here would not), as
// do a branch and a handoff: the snapshot then stays at its last cut,
// which the next wake checks the entries after against (Cut.Joins), and
// a wake that must finish a handoff sends nothing ahead.
type shadow struct {
	key  string
	from int           // index in the session's entries of b's first
	b    *view.Builder // the later load's view of entries[from:]
	memo model.Memo    // the provider's encoding of b's messages
	base int           // messages before from
	file *viewFile     // nil until there is something to write
	head viewHead      // the snapshot's head, for the file's creation
}

// keepView starts the shadow at a session's first model call, req, before
// it is sent (so a crash during the call leaves the next wake a snapshot):
// the snapshot the wake read stays if it holds what the call sends before
// the view's cut, and is written anew otherwise. It costs a write of the
// encoded messages, which the call encodes anyway (Prepare fills the memo
// the call then reuses).
func (s *session) keepView(req *model.Request) {
	r := s.rt
	sp, ok := r.provider.(model.Speculator)
	if s.viewKey == s.key || !ok || r.views == "" || !r.trim || !s.top || s.view == nil || req.Memo == nil {
		return
	}
	s.viewKey = s.key
	s.stopShadow()
	h := viewHead{Format: sp.Format(), Key: s.key}
	cut, ok := s.view.Cut()
	if !ok || handingOff(s.entries[:cut.Entry]) {
		cut = view.Cut{} // from the start, with nothing written
	}
	var msgs [][]byte
	if cut.Msgs > 0 {
		if sp.Prepare(req) != nil { // a request that cannot be encoded fails its call, which says why
			return
		}
		if msgs, ok = sp.Kept(req.Memo, cut.Msgs); !ok {
			return
		}
		h.CutUUID, h.Denied = s.entries[cut.Entry].UUID, cut.Denied
	}
	// A snapshot that cannot be written only leaves the next wake to load
	// the whole session, as it would without one. Without a cut, nothing
	// is written until the first response makes one.
	var f *viewFile
	var err error
	switch {
	case cut.Msgs == 0:
	case s.snap != nil && s.snap.head.CutUUID == h.CutUUID && s.snap.same(msgs):
		f, err = r.reopenView(s.snap.head)
	default:
		f, err = r.createView(h, msgs)
	}
	if err != nil {
		return
	}
	s.shadow = &shadow{key: s.key, from: cut.Entry, base: cut.Msgs, file: f, head: h,
		b: view.NewBuilder(s.entries[cut.Entry:], laterLoad(spillLater, cut.Msgs > 0))}
}

// shadowStep extends the shadow with the entries appended since its last
// step and appends the messages that became stable to the snapshot.
func (s *session) shadowStep() {
	sh := s.shadow
	if sh == nil {
		return
	}
	if sh.key != s.key {
		s.stopShadow()
		return
	}
	added := s.entries[sh.from+sh.b.Len():]
	if handingOff(added) { // a wake finishes the handoff before it asks anything else
		s.stopShadow()
		return
	}
	for _, e := range added {
		if e.Kind == store.KindResult && e.Op != nil && e.Op.Denied {
			s.stopShadow()
			return
		}
	}
	if !sh.b.Append(added...) {
		s.stopShadow()
		return
	}
	written := sh.base
	if sh.file != nil {
		written = sh.file.head.Msgs
	}
	cut, ok := sh.b.Cut()
	if !ok || sh.base+cut.Msgs <= written {
		return
	}
	sp := s.rt.provider.(model.Speculator)
	req := &model.Request{Model: s.spec.Model, Messages: sh.b.Messages(), Memo: &sh.memo}
	if sp.Prepare(req) != nil {
		s.stopShadow()
		return
	}
	msgs, ok := sp.Kept(&sh.memo, cut.Msgs)
	if !ok {
		s.stopShadow()
		return
	}
	e := s.entries[sh.from+cut.Entry]
	var err error
	if sh.file == nil {
		h := sh.head
		h.CutUUID, h.Denied = e.UUID, cut.Denied
		sh.file, err = s.rt.createView(h, msgs)
	} else {
		err = sh.file.append(e.UUID, sh.file.head.Denied || cut.Denied, msgs[written-sh.base:])
	}
	if err != nil {
		s.stopShadow()
	}
}

// stopShadow stops keeping the snapshot.
func (s *session) stopShadow() {
	if sh := s.shadow; sh != nil {
		s.shadow = nil
		if sh.file != nil {
			sh.file.f.Close()
		}
	}
}

// endView abandons a request sent ahead that no call took, closes the
// snapshot it was sent from, and stops the shadow.
func (s *session) endView() {
	if s.unspeculate != nil {
		s.unspeculate()
		s.snap.f.Close()
	}
	s.stopShadow()
}
