package agent

import (
	"context"
	"fmt"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/view"
)

// load reads a session to continue. With trimming on, every result it
// loads is old, and the view shows each one over the trim size as a
// pointer and a head: the store is asked for those heads only
// (store.Heads), so a wake of a long session does not copy tens of
// megabytes of old results to send a few hundred bytes of each (issue
// 12). The rest is read when a spill file must be written (whole). A
// fork copies its entries into a new session, so it loads them whole.
func (r *Runtime) load(ctx context.Context, key string, whole bool) ([]store.Entry, error) {
	h, ok := r.store.(store.Heads)
	if !r.trim || whole || !ok {
		return r.store.Load(ctx, key)
	}
	over, head := (&view.Trim{}).Heads()
	return h.LoadHeads(ctx, key, over, head)
}

// whole makes a partial op of this session's entries whole, from the
// store.
func (s *session) whole(op *store.Op) error {
	h, ok := s.rt.store.(store.Heads)
	if !ok {
		return fmt.Errorf("result %s: partial, and the store cannot read it whole", op.ID)
	}
	for _, e := range s.entries {
		if e.Op != op {
			continue
		}
		content, ok, err := h.ResultContent(context.Background(), s.key, e.Seq)
		if err == nil && (!ok || len(content) != op.Size) {
			err = fmt.Errorf("the store holds no result of %d bytes at seq %d", op.Size, e.Seq)
		}
		if err != nil {
			return fmt.Errorf("read result %s: %w", op.ID, err)
		}
		op.Content, op.Size = content, 0
		return nil
	}
	return fmt.Errorf("result %s: partial, and not an entry of session %s", op.ID, s.id)
}

// spill is Runtime.spill for this session's view.
func (s *session) spill(op *store.Op) (string, error) { return s.rt.spill(op, s.whole) }
