// Package human is the channel between a running agent and the person who
// gave it the task (R6.3, R6.4). The model sees two tools: ask, which waits
// until a question is settled, and inbox, which never waits. Front ends
// (terminal, HTTP, Web) drive the other side with Answer, Decline, Send,
// Pending and NextAsk, from any goroutine. Other processes reach it
// through the store (R12.4): a Remote lists the asks waiting and appends
// answers, mail and interrupts to the journal, and the driving process's
// Follower applies them (inbound.go).
//
// A question settles exactly once, as one of the States below. Whoever
// takes it out of the pending list (Answer, Decline, the timer or the
// cancelled run) owns the settlement, so a late Answer simply returns false.
package human

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/store"
)

// Timeouts, as seed 004's three distinct values: a duration waits that
// long; zero or less is unattended (every ask settles at once as timeout,
// R6.4); Forever waits as long as it takes. The zero Options value is
// therefore unattended, the one setting that can never hang a run nobody
// watches; "wait forever" is a named constant rather than a nil pointer,
// whose meaning would be the opposite of the zero value's.
const (
	// DefaultTimeout is what the CLI gives an ask when --timeout is not set.
	DefaultTimeout = 1800 * time.Second
	// Forever waits for the person as long as it takes. Only for runs with
	// someone watching: no timer ever settles the question.
	Forever = time.Duration(math.MaxInt64)
	// Unattended settles every ask at once as Timeout (R6.4). Zero and any
	// negative Timeout mean the same.
	Unattended = time.Duration(-1)
)

// TimeoutFromSeconds maps the spec's and the CLI's seconds (R6.3: nil =
// forever, <= 0 = unattended, otherwise that many seconds) to an
// Options.Timeout, so `--timeout 0` means unattended and not "default".
func TimeoutFromSeconds(s *float64) time.Duration {
	switch {
	case s == nil:
		return Forever
	case *s <= 0:
		return Unattended
	case *s >= Forever.Seconds():
		return Forever
	}
	return time.Duration(*s * float64(time.Second))
}

// Options configures a Channel. The zero value is usable: unlimited asks,
// unattended (no ask ever waits), logs under notes/ of the current
// directory, the built-in reply texts.
type Options struct {
	// Sink receives the ask events (asked, settled, mail, log errors).
	Sink event.Sink
	// MaxAsks caps the questions of the channel's life: nil = unlimited,
	// 0 = never ask (every ask settles at once as OverBudget).
	MaxAsks *int
	// Timeout is how long an ask waits: a duration, Forever, or <= 0 for
	// unattended. See TimeoutFromSeconds.
	Timeout time.Duration
	// The fixed replies the model gets when the person does not answer:
	// no one answered in time (or nobody watches), the question cap was
	// reached, the person declined (their reason, if any, follows). Empty
	// means the built-in TimeoutText, OverBudgetText, DeclinedText.
	TimeoutText, OverBudgetText, DeclinedText string
	// Workbench is <workspace>/.flower; the default paths live under it.
	Workbench string
	// QALog is where settled asks are appended; default
	// <Workbench>/notes/qa.md.
	QALog string
	// Amend is where mail from the person is appended so later steps see
	// it; default <Workbench>/notes/brief.md.
	Amend string
	// Clock is the time source; nil is the real clock. Tests inject one.
	Clock Clock
	// Store and JournalKey, when set, keep the person's mail and the asks
	// in the store under that key, so that they survive a crash (see
	// Restore). Unset: the channel lives in memory only.
	Store      store.Store
	JournalKey string
}

// Ask is a question to the person: waiting (State Asked) in Pending and
// the asked event, settled in the settled event's Raw.
type Ask struct {
	ID       string
	Question string
	Options  []string
	Asked    time.Time
	State    State
	Answer   string    // the answer, or the decline reason
	Settled  time.Time // zero while it waits
}

// WaitedS is how long the ask waited, or has waited by now, in seconds
// rounded to a tenth (seed 004's waited_s).
func (a Ask) WaitedS(now time.Time) float64 {
	end := a.Settled
	if end.IsZero() {
		end = now
	}
	return math.Round(end.Sub(a.Asked).Seconds()*10) / 10
}

// State is how a question ended up. Asked is the only unsettled state.
type State string

const (
	Asked      State = "asked"
	Answered   State = "answered"
	Timeout    State = "timeout"
	Declined   State = "declined"
	OverBudget State = "over_budget"
	Invalid    State = "invalid"
)

// Channel is one human channel. Its methods are safe from any goroutine.
type Channel struct {
	sink    event.Sink
	maxAsks int // -1: unlimited
	timeout time.Duration
	qaLog   string
	amend   string
	clock   Clock
	texts   replies
	journal *journal // nil: memory only

	// mu guards seq, asked, pending (with each waiting's handed), arrived,
	// inbox and the maps below.
	mu      sync.Mutex
	seq     int           // ids issued so far; ids are "q<seq>"
	asked   int           // asks counted against maxAsks
	pending []*waiting    // unsettled asks, by seq: oldest first
	arrived chan struct{} // closed and replaced when an ask starts waiting
	inbox   []mail        // mail not yet read by the inbox tool
	// What each tool call did, by call id, so that a call run again after
	// a crash finds it (restored from the journal).
	reads     map[string][]mail
	settledBy map[string]settlement
	// Inbound (inbound.go): answers that came through the store before
	// their call asked, by call; the ids of the mail the inbox has had.
	early   map[string]settlement
	mailIDs map[string]bool

	fileMu sync.Mutex // serializes appends to qaLog and amend, so entries never interleave
}

// waiting is an ask in the pending list. done is buffered: the one who
// removes the ask from pending sends its settlement without blocking.
type waiting struct {
	Ask
	seq    int
	call   string // the tool call that asks: answers through the store name it
	done   chan settlement
	handed bool // NextAsk has returned it
}

// settlement is how an ask ended: the answer, the decline reason or the
// problem with the input, in text.
type settlement struct {
	state State
	text  string
	kept  bool // journaled by Answer or Decline already
}

type mail struct {
	id   string // its journal id
	at   time.Time
	text string
}

// New returns a channel configured by opts.
func New(opts Options) *Channel {
	c := &Channel{
		sink:    opts.Sink,
		maxAsks: -1,
		timeout: opts.Timeout,
		qaLog:   opts.QALog,
		amend:   opts.Amend,
		clock:   opts.Clock,
		arrived: make(chan struct{}),
	}
	if opts.MaxAsks != nil {
		c.maxAsks = max(*opts.MaxAsks, 0)
	}
	c.texts = replies{timeout: opts.TimeoutText, overBudget: opts.OverBudgetText, declined: opts.DeclinedText}
	c.texts.fill()
	if opts.Store != nil && opts.JournalKey != "" {
		c.journal = &journal{s: opts.Store, key: opts.JournalKey}
	}
	c.reads, c.settledBy = map[string][]mail{}, map[string]settlement{}
	c.early, c.mailIDs = map[string]settlement{}, map[string]bool{}
	if c.qaLog == "" {
		c.qaLog = filepath.Join(opts.Workbench, "notes", "qa.md")
	}
	if c.amend == "" {
		c.amend = filepath.Join(opts.Workbench, "notes", "brief.md")
	}
	if c.clock == nil {
		c.clock = realClock{}
	}
	return c
}

// Answer settles a waiting ask with the person's text. It returns false when
// that ask is no longer waiting (settled, timed out, or never existed).
func (c *Channel) Answer(id, text string) bool {
	return c.resolve(id, settlement{state: Answered, text: text, kept: true})
}

// Decline settles a waiting ask without an answer; the model is told to
// decide itself. It returns false when that ask is no longer waiting.
func (c *Channel) Decline(id, reason string) bool {
	return c.resolve(id, settlement{state: Declined, text: reason, kept: true})
}

func (c *Channel) resolve(id string, s settlement) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.IndexFunc(c.pending, func(w *waiting) bool { return w.ID == id })
	if i < 0 {
		return false
	}
	w := c.pending[i]
	if s.kept {
		// The person's words are durable before the ask takes them (issue
		// 22 item 1): a kill from here on answers the call with them again.
		s.kept = w.call != "" && c.journal.put(record{Type: "settled", Call: w.call, State: s.state, Answer: s.text}) == nil
	}
	c.pending = slices.Delete(c.pending, i, i+1)
	w.done <- s
	return true
}

// Pending lists the asks waiting for the person, oldest first.
func (c *Channel) Pending() []Ask {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Ask, len(c.pending))
	for i, w := range c.pending {
		out[i] = w.clone()
	}
	return out
}

// NextAsk blocks until an ask is waiting that NextAsk has not returned
// before, and returns it (oldest first); it returns ctx's error when ctx
// ends first. Each ask is handed out once, so a front end can loop on
// NextAsk without spinning on a question it already shows; the ask may
// still settle (timeout) before the person answers, which Answer reports.
func (c *Channel) NextAsk(ctx context.Context) (Ask, error) {
	for {
		c.mu.Lock()
		for _, w := range c.pending {
			if !w.handed {
				w.handed = true
				c.mu.Unlock()
				return w.clone(), nil
			}
		}
		arrived := c.arrived
		c.mu.Unlock()
		select {
		case <-arrived:
		case <-ctx.Done():
			return Ask{}, fmt.Errorf("next ask: %w", ctx.Err())
		}
	}
}

func (w *waiting) clone() Ask {
	a := w.Ask
	a.Options = slices.Clone(a.Options)
	return a
}

// emit hands e to the sink. A panicking sink is recovered (R6.9): Answer and
// Send run in HTTP handlers and the stdin reader, which a broken consumer
// must not take down.
func (c *Channel) emit(e event.Event) {
	if c.sink == nil {
		return
	}
	defer func() { _ = recover() }()
	c.sink(e)
}

func (c *Channel) emitError(what string, err error) {
	c.emit(event.Event{Kind: event.Error, Text: fmt.Sprintf("human channel: %s: %v", what, err),
		Payload: map[string]any{"source": "human"}})
}
