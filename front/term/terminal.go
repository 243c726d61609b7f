package term

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/human"
)

// SpinEvery is how often the spinner line moves.
const SpinEvery = 100 * time.Millisecond

// Wake is what a person steers from the terminal while a wake works.
type Wake struct {
	Channel   *human.Channel
	Interrupt func(note string) // stop at the next message boundary, going on with note
	Oracle    func(ctx context.Context, q string) (string, error)
	Cost      func() float64 // USD of the steps done so far
	Number    int            // this wake's number
	Workspace string         // as shown
	StartOver func()         // /new: stop, then archive the thread
	// Slash expands a line naming a project's slash command (Commands.Slash).
	Slash func(line string) (string, bool)
}

// Terminal is the terminal front end of a wake: the renderer prints the
// events, and standard input answers questions, feeds the inbox, and asks
// the oracle with a line starting with "?" (R6.6).
type Terminal struct {
	r       *Renderer
	stdin   io.Reader
	offer   *Offer
	reading atomic.Bool // the input reader is alive
	noting  atomic.Bool // the next line typed is an interrupt's note
}

// NewTerminal renders on out and reads the person's lines from stdin.
func NewTerminal(out io.Writer, stdin io.Reader) *Terminal {
	return &Terminal{r: NewRenderer(out), stdin: stdin, offer: &Offer{}}
}

func (t *Terminal) say(text string) { t.r.Render(event.Event{Kind: event.Text, Text: text}) }

// Sink renders an event, and offers a line typed just before a question
// as its answer (R10.3).
func (t *Terminal) Sink(e event.Event) {
	t.r.Render(e)
	if line, ok := offeredAnswer(t.offer, e); ok {
		t.say(fmt.Sprintf("  you typed %q just before this question: Enter answers with it", line))
	}
}

// Attach starts reading the person's lines and the spinner for wake w;
// detach stops both and waits for them and for the oracle's answers.
func (t *Terminal) Attach(ctx context.Context, w Wake) (detach func()) {
	ctx, cancel := context.WithCancel(ctx)
	var a asides
	note := func(line string) bool {
		if !t.noting.Swap(false) {
			return false
		}
		w.Interrupt(line) // empty: just stop
		t.r.Stopping()
		return true
	}
	var typed func(string)
	if IsTerminal(t.stdin) { // only a terminal echoes what is typed
		typed = t.r.Typed
	}
	t.reading.Store(true)
	go func() {
		defer t.reading.Store(false)
		ReadInput(ctx, t.stdin, w.Channel, Commands{Oracle: func(q string) { a.goAsk(ctx, w.Oracle, q, t.r.Render) },
			New: w.StartOver, Note: note, Say: t.say, Offer: t.offer, Slash: w.Slash, Typed: typed,
			Status: func() {
				t.say(fmt.Sprintf("  wake %d in %s · $%.4f for the steps done so far · %d question(s) waiting · /help lists the commands",
					w.Number, w.Workspace, w.Cost(), len(w.Channel.Pending())))
			},
			Exit: func() {
				t.say("  /exit: stopping at the next message boundary; run flower here to continue")
				w.Interrupt("")
			},
			Closed: func() {
				t.say("  input closed (Ctrl-D): typed lines are no longer read; a question waits for its timeout, Ctrl-C stops")
			}})
	}()
	spun := make(chan struct{})
	go func() { defer close(spun); t.r.Spin(ctx, SpinEvery) }()
	return func() { cancel(); a.wait(); <-spun }
}

// FirstCtrlC gives the person a chance to add a note (R3.7): the next line
// they type becomes the interrupt's message. With nobody reading (input
// closed) it declines, and the run stops at once.
func (t *Terminal) FirstCtrlC(w io.Writer) bool {
	if !t.reading.Load() {
		return false
	}
	t.noting.Store(true)
	t.r.Hold(true) // the spinner would hide the note being typed
	fmt.Fprintln(w, "\nflower: interrupting. Type a note for the agent and press Enter to continue with it, or Enter alone to stop. It stops after the current tool, which is never killed. (Ctrl-C again exits at once, cutting the tool.)")
	return true
}

// asides runs oracle questions typed in the terminal, each in its own
// goroutine so the input reader goes on answering questions meanwhile.
type asides struct {
	mu     sync.Mutex // guards closed and the Add of wg
	closed bool
	wg     sync.WaitGroup
}

func (a *asides) goAsk(ctx context.Context, ask func(context.Context, string) (string, error), q string, show event.Sink) {
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
		answer, err := ask(ctx, q)
		if err != nil {
			if ctx.Err() == nil {
				show(event.Event{Kind: event.Error, Text: err.Error()})
			}
			return
		}
		show(event.Event{Kind: event.Text, Text: indent("  = ", strings.TrimSpace(answer)), Payload: map[string]any{"oracle": q}})
	}()
}

// wait lets no new question start and waits for those under way.
func (a *asides) wait() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.wg.Wait()
}

// offeredAnswer is the line to offer as the answer of the question e
// asks, if one was typed just before it (R10.3).
func offeredAnswer(o *Offer, e event.Event) (string, bool) {
	a, ok := e.Raw.(human.Ask)
	if e.Kind != event.Ask || !ok || e.Payload["state"] != string(human.Asked) {
		return "", false
	}
	return o.For(a)
}
