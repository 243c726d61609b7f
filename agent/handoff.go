package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/internal/atomicfile"
	"github.com/flower-run/flower/internal/failpoint"
	"github.com/flower-run/flower/resume"
	"github.com/flower-run/flower/store"
)

// Handoff settings (R4.7). The default threshold leaves a fifth of the
// window, at least 20K tokens, to write the handoff: summarizing at the wall
// is what makes /compact fail.
const (
	defaultHandoffAt = 0.8
	handoffWarn      = 0.1 // "approaching" this far below the threshold
	handoffTurns     = 4   // model turns allowed to write the document
	handoffDir       = ".flower/handoff"
)

// handoffAt is the context size at which the session hands off.
func (s *session) handoffAt() int {
	at := s.rt.handoffAt
	if at == 0 {
		at = defaultHandoffAt
	}
	w := s.info.Window
	return min(int(float64(w)*at), w-20_000)
}

// maybeHandoff reports an approaching wall and, past the threshold, hands
// the step to a new session. Subagents never hand off: their key is their
// parent's.
func (s *session) maybeHandoff(ctx context.Context) error {
	if !s.top || s.rt.handoffAt < 0 || s.info.Window == 0 {
		return nil
	}
	at := s.handoffAt()
	warn := at - int(float64(s.info.Window)*handoffWarn)
	// The next request carries what was appended since the last response
	// too: hand off before sending a request that would pass the threshold.
	projected := s.res.Context + s.pending/4
	switch {
	case projected >= at:
		s.preCompact(ctx)
		return s.handoff(ctx)
	case projected >= warn && !s.warned:
		s.warned = true
		s.emitHandoff("approaching", "context is nearing the handoff threshold", nil)
	}
	return nil
}

func (s *session) emitHandoff(phase, text string, extra map[string]any) {
	p := map[string]any{"phase": phase, "context": s.res.Context, "window": s.info.Window,
		"threshold": s.handoffAt(), "session": s.id}
	for k, v := range extra {
		p[k] = v
	}
	s.emit(event.Event{Kind: event.Handoff, Text: fmt.Sprintf("handoff %s: %s (context %d of %d)",
		phase, text, s.res.Context, s.info.Window), Payload: p})
}

// handoff has the session write its handoff document, then continues the
// step in a new session that starts from it (R4.7).
func (s *session) handoff(ctx context.Context) error {
	rel := filepath.Join(handoffDir, s.id+".md")
	s.emitHandoff("writing", "writing "+rel, map[string]any{"path": rel})
	if err := s.append(ctx, userText(fmt.Sprintf(handoffAsk, s.res.Context, s.info.Window, rel))); err != nil {
		return err
	}
	return s.writeHandoff(ctx, rel, false)
}

// writeHandoff gives the model its turns to write the document (none when
// it already ended its turn), then hands the step to the successor.
func (s *session) writeHandoff(ctx context.Context, rel string, ended bool) error {
	for i := 0; i < handoffTurns && !ended; i++ {
		resp, again, err := s.turn(ctx)
		if err != nil {
			return err
		}
		ended = !again && len(resp.Message.ToolUses()) == 0
	}
	doc := s.handoffDoc(rel)
	return s.succeed(ctx, doc)
}

// finishHandoff completes a handoff a crash cut while the model was
// writing the document, before the handoff entry: the session's last
// message from flower is the handoff request. Without it the resumed step
// would end with the text of the handoff turn as its result.
func (s *session) finishHandoff(ctx context.Context, ended bool) (bool, error) {
	if !s.top || !handingOff(s.entries) {
		return false, nil
	}
	rel := filepath.Join(handoffDir, s.id+".md")
	s.emitHandoff("writing", "resuming the handoff cut by a crash: "+rel, map[string]any{"path": rel})
	return true, s.writeHandoff(ctx, rel, ended)
}

// handingOff reports whether the last user message of entries is the
// handoff request.
func handingOff(entries []store.Entry) bool {
	for i := len(entries) - 1; i >= 0; i-- {
		if e := entries[i]; e.Kind == store.KindUser && e.Message != nil {
			return strings.HasPrefix(e.Message.TextOf(), handoffAskPrefix)
		}
	}
	return false
}

// handoffAskPrefix starts every handoff request, whatever its numbers.
var handoffAskPrefix = handoffAsk[:strings.Index(handoffAsk, "%")]

const handoffAsk = `[flower] Your context is nearly full (%d of %d tokens), so a fresh session will take over this work. ` +
	`Write the handoff document to %s now with the Write tool, for a successor who has not seen this conversation:
## Task — what the work is, in a paragraph
## Done — what is finished and verified
## Next — the concrete next steps, in order
## Decisions — what was decided and why
## Dead ends — what was tried and failed, so it is not tried again
## Files — the files that matter and what they hold
Then end your turn. Do not continue the work itself.`

// handoffDoc is the document the model wrote, or one built from the store
// when it wrote none: a handoff never fails for want of the model.
func (s *session) handoffDoc(rel string) string {
	if data, err := os.ReadFile(filepath.Join(s.rt.workspace, rel)); err == nil && len(strings.TrimSpace(string(data))) > 0 {
		return string(data)
	}
	doc := builtHandoff(s.entries)
	_ = os.MkdirAll(filepath.Join(s.rt.workspace, handoffDir), 0o755)
	_ = atomicfile.WriteFile(filepath.Join(s.rt.workspace, rel), []byte(doc), 0o644) // the store keeps it too
	return doc
}

// builtHandoff summarizes a session from its entries: the person's
// messages, the calls made and the model's last words.
func builtHandoff(entries []store.Entry) string {
	var asks, calls []string
	last := ""
	for _, e := range entries {
		switch {
		case e.Kind == store.KindUser && e.Message != nil && !strings.HasPrefix(e.Message.TextOf(), "[flower]"):
			if t := e.Message.TextOf(); t != "" {
				asks = append(asks, "- "+clip(t, 400))
			}
		case e.Kind == store.KindAssistant && e.Message != nil:
			for _, u := range e.Message.ToolUses() {
				calls = append(calls, fmt.Sprintf("- [%s] %s", u.Name, summary(u.Input)))
			}
			if t := e.Message.TextOf(); t != "" {
				last = t
			}
		}
	}
	if len(calls) > 60 {
		calls = append([]string{fmt.Sprintf("- … %d earlier calls", len(calls)-60)}, calls[len(calls)-60:]...)
	}
	return "# Handoff (built by flower from the session's record)\n\n## Task\n" + strings.Join(asks, "\n") +
		"\n\n## Done — calls made\n" + strings.Join(calls, "\n") + "\n\n## Last words of the previous session\n" + last + "\n"
}

// succeed retires this session and continues in a new one whose first
// message is the handoff document. The new session id is announced with an
// init event, so the lineage points at the successor.
//
// The successor's id is the uuid of the handoff entry that retires this
// session: it is fixed, and durable, before the successor starts. A process
// killed anywhere after the handoff entry leaves a session whose last entry
// names its successor; resume (resume.Session, then follow) continues that
// successor if its first message is durable, or starts it under that very id
// from the stored document if not. No successor is orphaned, none is made
// twice.
func (s *session) succeed(ctx context.Context, doc string) error {
	if err := s.append(ctx, store.Entry{Kind: store.KindHandoff, Text: doc}); err != nil {
		return err
	}
	failpoint.Hit("after-handoff") // the successor is named; it has not started
	return s.startSuccessor(ctx, s.entries[len(s.entries)-1].UUID, doc)
}

// follow continues a session that ended in a handoff in its successor, down
// the chain: a retired session is never written again (R4.7).
func (s *session) follow(ctx context.Context) error {
	for {
		p, err := resume.Session(s.entries)
		if err != nil {
			return fmt.Errorf("plan session %s: %w", s.id, err)
		}
		if p.Handoff == nil {
			return nil
		}
		if !s.top { // subagents never hand off: their key is their parent's
			return fmt.Errorf("subagent session %s ends in a handoff", s.key)
		}
		if err := s.takeOver(ctx, p.Handoff); err != nil {
			return err
		}
	}
}

// takeOver moves the run to the successor a handoff names: the stored one,
// or a new one under that id when the process died before it started.
func (s *session) takeOver(ctx context.Context, h *resume.Handoff) error {
	if h.Successor == "" {
		return fmt.Errorf("session %s ends in a handoff entry without a uuid", s.id)
	}
	key := s.rt.key(h.Successor, s.opts.subPath)
	entries, err := s.rt.load(ctx, key, false)
	if err != nil {
		return fmt.Errorf("load successor %s: %w", h.Successor, err)
	}
	if len(entries) == 0 {
		doc := h.Document
		if doc == "" {
			doc = builtHandoff(s.entries)
		}
		return s.startSuccessor(ctx, h.Successor, doc)
	}
	s.res.Retired = append(s.res.Retired, s.id)
	s.id, s.key, s.entries, s.old = h.Successor, key, entries, len(entries)
	s.res.SessionID = s.id
	return nil
}

// startSuccessor retires this session and starts succ from the handoff
// document. Its first message commits with the workflow's binding of the
// step to succ (s.bound), so the lineage never names a session without it.
func (s *session) startSuccessor(ctx context.Context, succ, doc string) error {
	old, oldKey := s.id, s.key
	if err := s.rt.store.PutSummary(context.WithoutCancel(ctx), oldKey, doc); err != nil {
		return fmt.Errorf("store handoff: %w", err)
	}
	s.id = succ
	s.key = s.rt.key(s.id, s.opts.subPath)
	s.entries, s.old, s.warned, s.pending = nil, 0, false, 0
	s.res.Retired = append(s.res.Retired, old)
	s.res.SessionID = s.id
	s.newMeta(old)
	rel := filepath.Join(handoffDir, old+".md")
	if err := s.appendWith(ctx, s.bound(), userText(fmt.Sprintf(takeOver, rel, doc))); err != nil {
		return err
	}
	s.emit(event.Event{Kind: event.Init, Text: "session " + s.id + " takes over from " + old,
		Payload: map[string]any{"session": s.id, "resumed": false, "retired": old}})
	s.emit(event.Event{Kind: event.Reset, Text: "new session from the handoff document"})
	s.res.Context = 0
	s.emitHandoff("done", "continuing in session "+s.id, map[string]any{"from": old, "to": s.id})
	return nil
}

const takeOver = `[flower] You are taking over this work from a previous session whose context filled up. ` +
	`Its handoff document (also at %s) follows. Continue from where it stopped; do not redo what is done.

%s`
