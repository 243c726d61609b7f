package term

import (
	"fmt"
	"strings"
)

// Lines starting with "/" are the reader's own commands (R10.3): they are
// never sent to the agent nor added to the brief. An unknown one gets a
// hint; "//text" sends "/text" as a note. A bare "exit" or "quit" is not
// sent either: someone who types it means to leave, not to tell the agent
// to; the reader says how to (/exit) and sends nothing.

// HelpText is what /help shows.
const HelpText = `  a line             answers the question waiting, else is a note the agent gets at its next message boundary
  1, 2, ...          picks an option of the question waiting
  Enter              with a line offered as a question's answer, answers with it
  ? question         asks a read-only side agent about the work; the run goes on
  /status            the run so far: cost, questions waiting
  /new               stop, archive this thread, start another with flower "task"
  /exit              stop at the next message boundary (flower continues it later)
  //text             sends "/text" as a note
  Ctrl-C             interrupt: type a note to continue with it, or Enter to stop; twice exits now`

const exitHint = `  not sent: /exit stops flower (it continues later with flower); to tell the agent "exit", write more words`

func command(line string, cmds Commands) {
	name, _, _ := strings.Cut(line, " ")
	switch name {
	case "/help", "/?":
		cmds.say(HelpText)
	case "/status":
		run(cmds.Status, cmds)
	case "/new":
		run(cmds.New, cmds)
	case "/exit", "/quit":
		run(cmds.Exit, cmds)
	default:
		cmds.say(fmt.Sprintf("  unknown command %s (not sent): /help lists the commands; //text sends a note starting with /", name))
	}
}

// builtinCommand reports whether line is one of the reader's own
// commands, which a project's slash command of that name does not hide.
func builtinCommand(line string) bool {
	name, _, _ := strings.Cut(line, " ")
	switch name {
	case "/help", "/?", "/status", "/new", "/exit", "/quit":
		return true
	}
	return false
}

func run(f func(), cmds Commands) {
	if f == nil {
		cmds.say("  not available here")
		return
	}
	f()
}

func (c Commands) say(text string) {
	if c.Say != nil {
		c.Say(text)
	}
}

func isBareExit(line string) bool {
	switch strings.ToLower(strings.TrimRight(line, ".!")) {
	case "exit", "quit", "bye", ":q", ":wq":
		return true
	}
	return false
}
