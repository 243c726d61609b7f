package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/resilience"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
)

const defaultMaxTurns = 100

// errInterrupted is the cause of a turn cancelled by Interrupt.
var errInterrupted = errors.New("agent: interrupted")

// Errors that end a run at a limit.
var (
	ErrMaxTurns = errors.New("max turns reached")
	ErrBudget   = errors.New("budget spent")
)

// stopOf classifies how a run ended by the error it ended with.
func stopOf(ctx context.Context, err error) Stop {
	switch {
	case err == nil:
		return StopEnded
	case errors.Is(err, errStopped):
		return StopInterrupted
	case errors.Is(err, ErrDiscarded):
		return StopDiscarded
	case ctx.Err() != nil:
		return StopCancelled
	case errors.Is(err, ErrMaxTurns):
		return StopMaxTurns
	case errors.Is(err, ErrBudget):
		return StopBudget
	}
	return StopFailed
}

// Run runs one agent until the model ends its turn, max turns, the budget,
// an error, an interrupt without text, or ctx ends (R2.2, R2.3).
func (r *Runtime) Run(ctx context.Context, spec Spec, prompt string, opts RunOptions) Result {
	res := Result{Start: r.now(), Attempts: 1}
	s, err := r.open(ctx, spec, opts, &res)
	if err == nil {
		res.SessionID = s.id
		err = s.run(ctx, prompt)
	}
	if err != nil && ctx.Err() != nil {
		err = context.Cause(ctx) // why the run was stopped: "killed-by-signal", say
	}
	res.Stop, res.Err = stopOf(ctx, err), err
	if err != nil {
		res.OK = false
		res.Error = err.Error()
		res.Errors = append(res.Errors, err.Error())
	}
	res.End = r.now()
	if opts.subPath == "" { // a subagent's cost is counted in its parent's
		r.addCost(res.Cost)
		r.shells.StopAll() // the step ended: its background shells end (R9.4)
	}
	if s != nil {
		s.emit(event.Event{Kind: event.Result, Text: res.Text, Payload: resultPayload(res)})
	}
	return res
}

func (s *session) run(ctx context.Context, prompt string) error {
	if s.res.Resumed {
		s.emit(event.Event{Kind: event.Init, Text: "continuing session " + s.id,
			Payload: map[string]any{"session": s.id, "resumed": true}})
		s.emit(event.Event{Kind: event.Reset, Text: "context loaded from the store"})
	}
	p, err := resume.Session(s.entries)
	if err != nil {
		return fmt.Errorf("plan session %s: %w", s.id, err)
	}
	if p.Last != nil && p.Last.Usage != nil {
		s.res.Context = p.Last.Usage.Context()
	}
	if err := s.catchUp(ctx, p); err != nil {
		return err
	}
	handedOff, err := s.finishHandoff(ctx, p.Ended)
	if err != nil {
		return err
	}
	if prompt != "" {
		if prompt, err = s.promptHooks(ctx, prompt); err != nil {
			return err
		}
		if err := s.appendAhead(ctx, s.bound(), userText(prompt)); err != nil {
			return err
		}
	} else if p.Ended && !handedOff {
		s.res.OK, s.res.Text = true, p.Last.Message.TextOf()
		return s.flush(ctx)
	}
	if !s.res.Resumed {
		// Before the first model call, so that no delta precedes it: a
		// reader learns the session's id first (issue 23, Claude Code's
		// system/init).
		s.emit(event.Event{Kind: event.Init, Text: "session " + s.id,
			Payload: map[string]any{"session": s.id, "resumed": false}})
	}
	err = s.loop(ctx)
	if ferr := s.flush(ctx); err == nil { // results a limit or an error left held
		err = ferr
	}
	if serr := s.settle(); err == nil { // the prompt, when no commit followed it
		err = serr
	}
	return err
}

// catchUp does what the stored session owes before the next model call:
// the pending calls of the last response (results must follow their
// calls), then the note of an interrupt that an older build recorded
// without it (R2.8).
func (s *session) catchUp(ctx context.Context, p resume.Plan) error {
	if len(p.Pending) > 0 {
		if err := s.catchUpCalls(ctx, p.Pending); err != nil {
			return err
		}
	}
	if p.Note != "" {
		return s.append(ctx, userText(p.Note))
	}
	return nil
}

// catchUpCalls runs the calls a crash left without results as a turn of
// their own, so an interrupt reaches them as it reaches any turn's calls: a
// question asked again after a crash is cut, an effect finishes (issue 23:
// task_interrupt waited for the re-asked question's answer).
func (s *session) catchUpCalls(ctx context.Context, calls []resume.Call) error {
	turn, done := s.rt.beginTurn(ctx, s.top)
	err := s.runTools(turn, calls)
	done()
	if text, ok := s.rt.takeInterrupt(turn, s.top); ok && err == nil {
		return s.interrupted(ctx, text, false)
	}
	return err
}

// loop alternates model calls and tool runs until the turn ends.
func (s *session) loop(ctx context.Context) error {
	max := s.spec.MaxTurns
	if max <= 0 {
		max = defaultMaxTurns
	}
	for {
		if s.res.Turns >= max {
			return fmt.Errorf("%w (%d)", ErrMaxTurns, max)
		}
		if _, err := s.deliverMail(ctx); err != nil {
			return err
		}
		if err := s.maybeHandoff(ctx); err != nil {
			return err
		}
		resp, again, err := s.turn(ctx)
		if again {
			continue
		}
		if err != nil {
			return err
		}
		if len(resp.Message.ToolUses()) == 0 {
			// Mail that came while the model wrote its last word is the
			// person's next turn, not something to drop.
			if more, err := s.deliverMail(ctx); err != nil || more {
				if err != nil {
					return err
				}
				continue
			}
			if more, err := s.stopHooks(ctx); err != nil || more {
				if err != nil {
					return err
				}
				continue
			}
			s.res.OK, s.res.Text = true, resp.Message.TextOf()
			return nil
		}
		if s.spec.MaxBudget > 0 && s.res.Cost >= s.spec.MaxBudget {
			return fmt.Errorf("%w: %s of %s", ErrBudget, model.USD(s.res.Cost), model.USD(s.spec.MaxBudget))
		}
	}
}

// turn makes one model call durable and answers its tool calls. again
// reports an interrupt with a message: the loop goes on with it.
func (s *session) turn(ctx context.Context) (resp *model.Response, again bool, err error) {
	turn, done := s.rt.beginTurn(ctx, s.top)
	s.refreshTools(turn)
	resp, streaming, err := s.call(turn)
	cut := err != nil // the call failed, as an interrupt makes it
	if err == nil {
		err = s.commit(ctx, resp) // an answer received is stored, interrupt or not
	}
	if err == nil && len(resp.Message.ToolUses()) > 0 {
		err = s.answerCalls(turn, resp)
	}
	done()
	// An interrupt explains a failed call, never a failed write or a
	// discard: those end the run whatever the person asked.
	if text, ok := s.rt.takeInterrupt(turn, s.top); ok && (err == nil || cut) {
		if err := s.interrupted(ctx, text, cut && streaming); err != nil {
			return nil, false, err
		}
		return nil, true, nil
	}
	return resp, false, err
}

// call asks the model for the next response over the session's view,
// retrying transient failures and waiting out an unreachable network
// (R4.3). A failed attempt leaves only a synthetic record the model never
// sees, so the retry sends the same clean history. An interrupt cancels the
// call and never counts as an attempt. streaming reports that the call was
// cancelled while a request was out, not while it waited (offline, say): only
// then may tokens have been paid.
func (s *session) call(ctx context.Context) (_ *model.Response, streaming bool, _ error) {
	req := s.request()
	retry := s.rt.retry
	retry.OnRetry = func(n resilience.Notice) { s.emit(n.Event()) }
	var resp *model.Response
	attempts, err := retry.Do(ctx, func(ctx context.Context, attempt int) error {
		r, err := s.rt.provider.Stream(ctx, req, s.deltas(attempt))
		if err != nil && ctx.Err() == nil {
			s.recordAPIError(ctx, err)
		}
		streaming = err != nil && ctx.Err() != nil
		resp = r
		return err
	})
	if attempts > 1 {
		// The retries went on in this session instead of starting over:
		// the step resumed, as seed 000's manifest row of a dropped
		// network says (attempts=2, resumed=true).
		s.res.Attempts += attempts - 1
		s.res.Resumed = true
	}
	return resp, streaming, err
}

// recordAPIError keeps a synthetic record of a failed call; views never
// show it to the model (R4.5).
func (s *session) recordAPIError(ctx context.Context, err error) {
	s.res.Errors = append(s.res.Errors, err.Error())
	_ = s.append(ctx, store.Entry{Kind: store.KindAPIError, Text: err.Error()})
	s.emit(event.Event{Kind: event.Error, Text: err.Error()})
}

// commit makes a response durable together with the intents of its
// side-effecting calls, in one transaction, before any tool runs (R5.1).
func (s *session) commit(ctx context.Context, resp *model.Response) error {
	cost := s.info.Cost(resp.Usage)
	msg := resp.Message
	entries := []store.Entry{{Kind: store.KindAssistant, Message: &msg, Model: resp.Model,
		StopReason: resp.StopReason, Usage: &resp.Usage, Cost: cost}}
	for _, u := range msg.ToolUses() {
		if s.isEffect(u.Name) && s.permitted(u) {
			entries = append(entries, store.Entry{Kind: store.KindOpStarted,
				Op: &store.Op{ID: u.ID, Tool: u.Name, Input: u.Input, Class: "effect"}})
			s.intents[u.ID] = true
		}
	}
	if err := s.append(ctx, entries...); err != nil {
		return err
	}
	s.res.Turns++
	s.res.Cost += cost
	s.res.Context = resp.Usage.Context()
	for _, e := range normalize(resp, s.res.Context, s.info.Window, cost) {
		s.emit(e)
	}
	return nil
}

// answerCalls runs the calls of a response, unless the response was cut at
// max_tokens: then every call is answered as truncated, without running.
func (s *session) answerCalls(ctx context.Context, resp *model.Response) error {
	failpoint.Hit("after-intent") // the response and its intents are durable; no tool has run
	if resp.StopReason != model.StopMaxTokens {
		return s.runTools(ctx, fresh(resp.Message.ToolUses()))
	}
	for _, u := range resp.Message.ToolUses() {
		op := store.Op{ID: u.ID, Tool: u.Name, Content: truncatedText, IsError: true}
		if err := s.append(ctx, store.Entry{Kind: store.KindResult, Op: &op}); err != nil {
			return err
		}
	}
	return nil
}
