package agent

import (
	"context"
	"fmt"

	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
)

// appendAhead appends entries as append does, except that it does not
// wait for the commit: the loop goes on while they are being made
// durable, and the next commit of the session waits for them first
// (settle). Two commits go so (package comment, "Overlap"): a run's
// prompt, under way while the first request is sent; and a response
// whose calls are all pure, under way while those calls run and the next
// request is built, which then waits for it before it is sent (gate).
func (s *session) appendAhead(ctx context.Context, b store.Batch, gate bool, entries ...store.Entry) error {
	if err := s.settle(); err != nil {
		return err
	}
	held := len(s.held)
	entries, b = s.chain(b, entries)
	b = s.metaBatch(b)
	s.meta = nil
	done := make(chan error, 1)
	go func() { done <- s.rt.store.Commit(context.WithoutCancel(ctx), b) }()
	s.ahead, s.aheadHeld, s.aheadGate = done, held, gate
	s.entries = append(s.entries, entries...) // the view shows them now
	s.countPending(entries)
	return nil
}

// settle waits for the commit under way, if any, and returns its error, on
// every call from then on: once a commit is lost nothing commits after it.
func (s *session) settle() error {
	if s.ahead != nil {
		err := <-s.ahead
		s.ahead, s.aheadGate = nil, false
		if err != nil {
			s.aheadErr = fmt.Errorf("append to session %s: %w", s.id, err)
		}
		for range s.aheadHeld * btoi(err == nil) {
			failpoint.Hit("after-result") // a held result is durable from here
		}
		s.aheadHeld = 0
	}
	return s.aheadErr
}

// gated waits, before a request is sent, for the commit of the response
// before it (appendAhead with gate).
func (s *session) gated() error {
	if !s.aheadGate {
		return nil
	}
	return s.settle()
}

// overlaps reports whether resp's commit may overlap running its calls:
// it asks for calls, none of them an effect (so it records no intent) or
// a tool that keeps its results (ask: a person must never answer a
// question a crash can take back), and it was not cut at max_tokens
// (those calls are answered at once).
func (s *session) overlaps(resp *model.Response) bool {
	uses := resp.Message.ToolUses()
	if len(uses) == 0 || resp.StopReason == model.StopMaxTokens {
		return false
	}
	for _, u := range uses {
		if t, ok := s.reg[u.Name]; s.isEffect(u.Name) || ok && tool.Keeps(t) {
			return false
		}
	}
	return true
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
