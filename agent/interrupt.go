package agent

import (
	"context"
	"errors"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/store"
)

// errStopped ends a run that was interrupted without a message.
var errStopped = errors.New("interrupted")

// beginTurn returns the context of one turn. For a top-level run, Interrupt
// cancels it; an interrupt that arrived between turns cancels it at once.
// done must be called when the turn's work is over.
func (r *Runtime) beginTurn(ctx context.Context, top bool) (context.Context, func()) {
	turn, cancel := context.WithCancelCause(context.WithValue(ctx, outerKey{}, ctx))
	if !top {
		return turn, func() { cancel(nil) }
	}
	r.mu.Lock()
	r.cancelTurn = cancel
	if len(r.interrupt) > 0 {
		cancel(errInterrupted)
	}
	r.mu.Unlock()
	return turn, func() {
		r.mu.Lock()
		r.cancelTurn = nil
		r.mu.Unlock()
		cancel(nil)
	}
}

// outerKey keys the context a turn was made from: an effect runs on it, so
// an interrupt never cuts a running effect (seed 004: the interrupt is
// cooperative; a killed Bash would be an ambiguous effect). Only a
// cancelled run (Ctrl-C twice, a signal) cuts it.
type outerKey struct{}

// effectContext is the context an effect runs on within turn: the turn's
// outer context when there is one, else turn.
func effectContext(turn context.Context) context.Context {
	if outer, ok := turn.Value(outerKey{}).(context.Context); ok {
		return outer
	}
	return turn
}

// takeInterrupt returns the text of the interrupt that cut this turn.
func (r *Runtime) takeInterrupt(turn context.Context, top bool) (string, bool) {
	if !top || !errors.Is(context.Cause(turn), errInterrupted) {
		return "", false
	}
	select {
	case text := <-r.interrupt:
		return text, true
	default:
		return "", true
	}
}

// interrupted records the interrupt at this message boundary, then either
// stops the run (no text) or gives the text to the model as the person's
// next message (R2.8). The record and the note are one write: a process
// killed between two writes would lose what the person said. It never
// counts as a failed attempt.
func (s *session) interrupted(ctx context.Context, text string, cut bool) error {
	entries := []store.Entry{{Kind: store.KindInterrupt, Text: text}}
	if text != "" {
		entries = append(entries, userText(text))
	}
	if err := s.append(ctx, entries...); err != nil {
		return err
	}
	// cut: a model answer was streaming; nothing of it is stored, but its
	// tokens so far are billed.
	s.emit(event.Event{Kind: event.Interrupt, Text: text, Payload: map[string]any{"model_cut": cut}})
	if text == "" {
		return errStopped
	}
	return nil
}
