package term

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/flower-run/flower/human"
)

// Channel is what the input reader needs of the human channel.
type Channel interface {
	Pending() []human.Ask
	Answer(id, text string) bool
	Send(text string)
}

// Commands are typed lines the reader handles itself instead of passing on.
type Commands struct {
	Oracle func(question string) // a line starting with "?" (R6.5); nil: sent as mail
	New    func()                // "/new" (R3.13); nil: sent as mail
	// Note, when set, is offered every line first (an empty one included)
	// and reports whether it took it: after a Ctrl-C the next line is the
	// interrupt's note (R3.7).
	Note func(line string) bool
	// Status answers "/status"; Exit answers "/exit" (stop at the next
	// message boundary). Nil: the command says it is not available.
	Status func()
	Exit   func()
	// Slash, when set, turns a line "/name args" naming one of the
	// project's slash commands (.claude/commands) into its prompt, which is
	// then sent as a typed line would be; ok false leaves it a command.
	Slash func(line string) (prompt string, ok bool)
	// Say shows the reader's own replies (help, hints); nil drops them.
	Say func(text string)
	// Offer, when set, remembers the line sent last, so that a question
	// that appears just after can offer it as its answer.
	Offer *Offer
	// Closed is called when the input ends (Ctrl-D) after a line was read,
	// or at once on a terminal.
	Closed func()
	// Typed, when set, is told of each line read, before it is handled.
	Typed func(line string)
}

// ReadInput reads lines from r until it ends or ctx is done. With a question
// waiting, a line answers the oldest one (a number picks an option);
// otherwise it goes to the inbox, so typed text is never swallowed by a
// later question (R6.6).
func ReadInput(ctx context.Context, r io.Reader, ch Channel, cmds Commands) {
	lines := make(chan string)
	read := false
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case line, ok := <-lines:
			if !ok {
				if cmds.Closed != nil && (read || IsTerminal(r)) {
					cmds.Closed()
				}
				return
			}
			read = true
			if cmds.Typed != nil {
				cmds.Typed(line)
			}
			handleLine(strings.TrimSpace(line), ch, cmds)
		}
	}
}

func handleLine(line string, ch Channel, cmds Commands) {
	// Commands come first, even as the note of an interrupt: "/exit"
	// after a Ctrl-C must stop, not be told to the agent.
	switch {
	case strings.HasPrefix(line, "/") && !strings.HasPrefix(line, "//"):
		prompt, ok := "", false
		if cmds.Slash != nil && !builtinCommand(line) {
			prompt, ok = cmds.Slash(line)
		}
		if !ok {
			command(line, cmds)
			return
		}
		line = prompt
		if strings.HasPrefix(line, "//") {
			line = "/" + line // kept whole by the "//x" rule below
		}
	case isBareExit(line):
		cmds.say(exitHint)
		return
	}
	if strings.HasPrefix(line, "//") {
		line = line[1:] // "//x" sends "/x"
	}
	if cmds.Note != nil && cmds.Note(line) {
		return
	}
	switch {
	case line == "":
		cmds.Offer.confirm(ch)
		return
	case strings.HasPrefix(line, "?") && cmds.Oracle != nil:
		cmds.Oracle(strings.TrimSpace(line[1:]))
		return
	}
	for _, a := range ch.Pending() {
		if ch.Answer(a.ID, pickOption(a, line)) {
			return
		}
	}
	ch.Send(line)
	cmds.Offer.sent(line)
}

// pickOption turns "2" into the second option of a question with options.
func pickOption(a human.Ask, line string) string {
	n, err := strconv.Atoi(line)
	if err != nil || n < 1 || n > len(a.Options) {
		return line
	}
	return a.Options[n-1]
}
