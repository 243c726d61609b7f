package agent

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/view"
)

// A wake's snapshot of the view (issue 12). Waking a long session costs
// what reading it and encoding its view cost: hundreds of milliseconds for
// 10,000 entries, before the model is asked anything. A snapshot keeps the
// encoded messages of a session's view up to a cut (view.Cut) in a file
// of the state directory (Options.Views); the next wake reads it and the
// entries after the cut only, and sends the request they make at once
// (model.Speculator), while the session loads as it always did. The first
// model call of the run then builds its request from the whole session as
// before and takes the answer to the one sent ahead only if the two
// bodies are the same byte for byte; otherwise that one is abandoned and
// the call sends its own. So a snapshot, stale, torn or forged, can cost
// a request, never change one: nothing of it is durable, the store stays
// the one truth, and a crash leaves what it leaves without it.
//
// The snapshot is derived data: written without an fsync, replaced by a
// rename, checked on opening (its key, format, the id and seq of the cut's
// entry, its length), and written again by a wake that finds it stale or
// different from what its first call sends. It is written as a wake's
// first model call is sent, from the view that call sends; its cut lies
// in what the wake loaded, since entries of the running process are shown
// whole and a later load trims them. The messages are streamed from the
// file into the request, never read into memory.

const viewVersion = 2

// viewHead is the first line of a snapshot file; the JSON of Msgs
// messages follows it, joined by commas, Size bytes.
type viewHead struct {
	Version int    `json:"v"`
	Format  string `json:"format"` // model.Speculator.Format
	Key     string `json:"key"`
	CutSeq  int64  `json:"cut_seq"`
	CutUUID string `json:"cut_uuid"`
	Denied  bool   `json:"denied"`
	Msgs    int    `json:"msgs"`
	Size    int64  `json:"size"`
}

// viewSnap is a snapshot opened for reading: its messages are read from
// the file while a request is sent, never held in memory (a wake would pay
// more for touching megabytes of new memory than for anything else).
type viewSnap struct {
	head viewHead
	f    *os.File
	msgs *io.SectionReader
}

// viewPath is where the snapshot of key's view is kept.
func (r *Runtime) viewPath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(r.views, hex.EncodeToString(sum[:16])+".view")
}

// openView opens the snapshot of key's view in format; nil when there is
// none or its head does not check.
func (r *Runtime) openView(key, format string) *viewSnap {
	f, err := os.Open(r.viewPath(key))
	if err != nil {
		return nil
	}
	line, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	st, serr := f.Stat()
	var h viewHead
	if err != nil || serr != nil || json.Unmarshal(line, &h) != nil || h.Version != viewVersion || h.Format != format ||
		h.Key != key || h.CutUUID == "" || h.Msgs < 1 || h.Size < 1 || st.Size() != int64(len(line))+h.Size {
		f.Close()
		return nil
	}
	return &viewSnap{head: h, f: f, msgs: io.NewSectionReader(f, int64(len(line)), h.Size)}
}

// same reports whether the snapshot holds msgs, read in small pieces.
func (v *viewSnap) same(msgs [][]byte) bool {
	if len(msgs) != v.head.Msgs {
		return false
	}
	r := bufio.NewReaderSize(io.NewSectionReader(v.msgs, 0, v.msgs.Size()), 64<<10)
	buf := make([]byte, 64<<10)
	for i, m := range msgs {
		if i > 0 {
			m = append([]byte(","), m...) // small: one message
		}
		for len(m) > 0 {
			k, err := io.ReadFull(r, buf[:min(len(buf), len(m))])
			if err != nil || !bytes.Equal(buf[:k], m[:k]) {
				return false
			}
			m = m[k:]
		}
	}
	_, err := r.ReadByte()
	return err == io.EOF
}

// writeView replaces the snapshot of key's view: written to a temporary
// file and renamed over the old one, without an fsync (derived data: a
// machine crash may lose it, and the next wake loads the session whole).
// A reader of the old file keeps reading the old one.
func (r *Runtime) writeView(h viewHead, msgs [][]byte) error {
	h.Version, h.Msgs, h.Size = viewVersion, len(msgs), int64(len(msgs)-1)
	for _, m := range msgs {
		h.Size += int64(len(m))
	}
	line, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(r.views, 0o700); err != nil {
		return err
	}
	path := r.viewPath(h.Key)
	tmp := path + ".tmp" // one writer per session: the workspace lock
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write(line)
	w.WriteByte('\n')
	for i, m := range msgs {
		if i > 0 {
			w.WriteByte(',')
		}
		w.Write(m)
	}
	err = w.Flush() // the first write error, if any
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// speculate sends the request a snapshot of the session's view predicts,
// before the session loads: see the comment at the top of this file. It
// does nothing, and costs nothing but a stat, unless everything it needs
// is there: a resumed top-level session continued without a new prompt,
// trimming on (a snapshot shows old results trimmed), a provider that can
// speculate, a store that loads heads, and a snapshot of this key that
// the entries after its cut join (view.Cut.Joins). It sends nothing when
// the run would not begin with a model request of that view: calls
// pending, an interrupt's note, a handoff, mail waiting, an ended turn.
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
	tail, err := heads.LoadHeadsFrom(ctx, s.key, snap.head.CutSeq, over, head)
	if err != nil || len(tail) == 0 || tail[0].UUID != snap.head.CutUUID || tail[0].Seq != snap.head.CutSeq ||
		!(view.Cut{Denied: snap.head.Denied}).Joins(tail) {
		return
	}
	p, err := resume.Session(tail)
	if err != nil || len(p.Pending) > 0 || p.Note != "" || p.Ended || p.Handoff != nil || p.Interrupted ||
		handingOff(tail) || s.wouldHandOff(p) {
		return
	}
	msgs := s.joinedView(tail)
	if len(msgs) == 0 {
		return
	}
	req := &model.Request{Model: s.spec.Model, System: s.system(), Messages: msgs, Tools: s.toolDefs(), Memo: s.memo}
	cancel, err := sp.Speculate(ctx, req, snap.msgs)
	if err == nil {
		s.unspeculate, s.snap, sent = cancel, snap, true
	}
}

// joinedView is the view of a session's entries from a snapshot's cut on,
// as the view of the whole session shows them after the snapshot's
// messages.
func (s *session) joinedView(tail []store.Entry) []model.Message {
	whole := func(op *store.Op) error { return s.wholeOf(tail, op) }
	o := view.Options{KeepDenials: 1, Old: len(tail), Settled: true, Joined: true,
		Trim: &view.Trim{Spill: func(op *store.Op) (string, error) { return s.rt.spill(op, whole) }}}
	s.rt.listSpills()
	msgs := view.NewBuilder(tail, o).Messages()
	s.rt.seal()
	return msgs
}

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

// keepView writes the snapshot of the view of req, the first model call
// of a resumed session, before the call is sent: so that a crash during
// the call leaves the next wake its snapshot. It costs a write of the
// encoded messages, which the call encodes anyway (Prepare fills the
// memo the call then reuses), and writes nothing when the snapshot the
// wake read holds the same messages at the same cut.
func (s *session) keepView(req *model.Request) {
	r := s.rt
	sp, ok := r.provider.(model.Speculator)
	if s.viewKept || !ok || r.views == "" || !r.trim || !s.top || !s.res.Resumed || s.view == nil || req.Memo == nil {
		return
	}
	s.viewKept = true
	cut, ok := s.view.Cut()
	if !ok || cut.Entry >= s.old || handingOff(s.entries[:cut.Entry]) {
		return
	}
	e := s.entries[cut.Entry]
	if e.Seq == 0 || sp.Prepare(req) != nil { // a request that cannot be encoded fails its call, which says why
		return
	}
	msgs, ok := sp.Kept(req.Memo, cut.Msgs)
	if !ok || s.snap != nil && s.snap.head.CutUUID == e.UUID && s.snap.same(msgs) {
		return
	}
	// A snapshot that cannot be written only leaves the next wake to load
	// the whole session, as it would without one.
	_ = r.writeView(viewHead{Format: sp.Format(), Key: s.key, CutSeq: e.Seq, CutUUID: e.UUID, Denied: cut.Denied}, msgs)
}

// endView abandons a request sent ahead that no call took, and closes
// the snapshot it was sent from.
func (s *session) endView() {
	if s.unspeculate != nil {
		s.unspeculate()
		s.snap.f.Close()
	}
}
