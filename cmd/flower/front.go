package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/human"
	"github.com/flower-run/flower/oracle"
	"github.com/flower-run/flower/store"
)

// frontEnd is where a wake shows its events and takes the person's input:
// the terminal (flower [TASK]) or HTTP and the Web page (flower serve).
// Everything else about a wake is the same.
type frontEnd struct {
	// sink receives every event of the run.
	sink event.Sink
	// attach starts taking the person's input once the run is set up,
	// just before it starts; its error, an *exitError, ends the wake.
	// detach stops that and waits for what it started; it runs when the
	// run is over.
	attach func(ctx context.Context, r wakeRun) (detach func(), err error)
	// firstCtrlC, when set, handles the first Ctrl-C and reports whether it
	// did; otherwise the run stops at the next message boundary.
	firstCtrlC func(rt *agent.Runtime, w io.Writer) bool
}

// wakeRun is what a front end steers.
type wakeRun struct {
	ch     *human.Channel
	rt     *agent.Runtime
	oracle *oracle.Oracle
	banner string      // the wake's first line (R3.12)
	wake   int         // this wake's number
	ws     string      // the workspace, as shown
	store  store.Store // the wake's store: flower serve keeps its events there
	// startOver stops the run at the next message boundary and archives the
	// thread once it has stopped (/new at the prompt, R3.13).
	startOver func()
}

// terminal is the default front end: the renderer prints the events, and
// standard input answers questions, feeds the inbox, and asks the oracle
// with a line starting with "?" (R6.6).
func terminal(out io.Writer, stdin io.Reader) frontEnd {
	r := term.NewRenderer(out)
	var reading, noting atomic.Bool // the reader is alive; the next line is an interrupt's note
	offer := &term.Offer{}
	say := func(text string) { r.Render(event.Event{Kind: event.Text, Text: text}) }
	sink := func(e event.Event) {
		r.Render(e)
		if line, ok := offeredAnswer(offer, e); ok {
			say(fmt.Sprintf("  you typed %q just before this question: Enter answers with it", line))
		}
	}
	fe := frontEnd{sink: sink, attach: func(ctx context.Context, run wakeRun) (func(), error) {
		ctx, cancel := context.WithCancel(ctx)
		var a asides
		oracle := func(q string) { a.goAsk(ctx, run.oracle, q, r.Render) }
		note := func(line string) bool {
			if !noting.Swap(false) {
				return false
			}
			run.rt.Interrupt(line) // empty: just stop
			r.Stopping()
			return true
		}
		reading.Store(true)
		go func() {
			defer reading.Store(false)
			term.ReadInput(ctx, stdin, run.ch, term.Commands{Oracle: oracle, New: run.startOver, Note: note,
				Say: say, Offer: offer, Status: func() { say(runStatusLine(run)) },
				Exit: func() {
					say("  /exit: stopping at the next message boundary; run flower here to continue")
					run.rt.Interrupt("")
				},
				Closed: func() {
					say("  input closed (Ctrl-D): typed lines are no longer read; a question waits for its timeout, Ctrl-C stops")
				}})
		}()
		spun := make(chan struct{})
		go func() { defer close(spun); r.Spin(ctx, spinEvery) }()
		return func() { cancel(); a.wait(); <-spun }, nil
	}}
	// The first Ctrl-C gives the person a chance to add a note (R3.7): the
	// next line they type becomes the interrupt's message. With nobody
	// reading (input closed), it stops the run at once.
	fe.firstCtrlC = func(rt *agent.Runtime, w io.Writer) bool {
		if !reading.Load() {
			return false
		}
		noting.Store(true)
		r.Hold(true) // the spinner would hide the note being typed
		fmt.Fprintln(w, "\nflower: interrupting. Type a note for the agent and press Enter to continue with it, or Enter alone to stop. It stops after the current tool, which is never killed. (Ctrl-C again exits at once, cutting the tool.)")
		return true
	}
	return fe
}

// spinEvery is how often the spinner line moves.
const spinEvery = 100 * time.Millisecond

// asides runs oracle questions typed in the terminal, each in its own
// goroutine so the input reader goes on answering questions meanwhile.
type asides struct {
	mu     sync.Mutex // guards closed and the Add of wg
	closed bool
	wg     sync.WaitGroup
}

func (a *asides) goAsk(ctx context.Context, o *oracle.Oracle, q string, show event.Sink) {
	if q == "" {
		show(event.Event{Kind: event.Text, Text: `  ? ask the oracle something, e.g. "? how far along are you?"`})
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		show(event.Event{Kind: event.Text, Text: "  ? " + q + "  (the oracle is looking; the run goes on)"})
		answer, err := o.Ask(ctx, q)
		if err != nil {
			if ctx.Err() == nil {
				show(event.Event{Kind: event.Error, Text: err.Error()})
			}
			return
		}
		show(event.Event{Kind: event.Text, Text: indentLines("  = ", answer), Payload: map[string]any{"oracle": q}})
	}()
}

// wait lets no new question start and waits for those under way.
func (a *asides) wait() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.wg.Wait()
}

func indentLines(prefix, s string) string {
	pad := strings.Repeat(" ", len([]rune(prefix)))
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = prefix + lines[i]
		} else {
			lines[i] = pad + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// offeredAnswer is the line to offer as the answer of the question e
// asks, if one was typed just before it (R10.3).
func offeredAnswer(o *term.Offer, e event.Event) (string, bool) {
	a, ok := e.Raw.(human.Ask)
	if e.Kind != event.Ask || !ok || e.Payload["state"] != string(human.Asked) {
		return "", false
	}
	return o.For(a)
}

// runStatusLine answers /status.
func runStatusLine(run wakeRun) string {
	waiting := len(run.ch.Pending())
	return fmt.Sprintf("  wake %d in %s · $%.4f for the steps done so far · %d question(s) waiting · /help lists the commands",
		run.wake, run.ws, run.rt.TotalCost(), waiting)
}
