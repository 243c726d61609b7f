package agent

import (
	"context"
	"fmt"

	"github.com/flower-run/flower/store"
)

// appendAhead appends a run's prompt as append does, except that it does
// not wait for the commit: the first model request is sent while the
// prompt is being made durable, and the next commit of the session (the
// response's, at the latest) waits for it first (settle). The crash
// semantics are those of a synchronous commit (see the package comment,
// "Overlap"): the store holds the prompt, or nothing of this run, and
// never a response without the prompt it answers. Results held from a
// crash's pending calls take the synchronous path, as does anything else.
func (s *session) appendAhead(ctx context.Context, b store.Batch, entries ...store.Entry) error {
	if len(s.held)+len(s.world) > 0 {
		return s.appendWith(ctx, b, entries...)
	}
	if err := s.settle(); err != nil {
		return err
	}
	entries, b, _ = s.chain(b, entries)
	b = s.metaBatch(b)
	s.meta = nil
	done := make(chan error, 1)
	go func() { done <- s.rt.store.Commit(context.WithoutCancel(ctx), b) }()
	s.ahead = done
	s.entries = append(s.entries, entries...) // the view shows the prompt now
	s.countPending(entries)
	return nil
}

// settle waits for the commit under way, if any, and returns its error, on
// every call from then on: once a commit is lost nothing commits after it.
func (s *session) settle() error {
	if s.ahead != nil {
		if err := <-s.ahead; err != nil {
			s.aheadErr = fmt.Errorf("append to session %s: %w", s.id, err)
		}
		s.ahead = nil
	}
	return s.aheadErr
}
