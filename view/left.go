package view

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// Left is one thing a session holds that its view leaves out: a denied call
// dropped with its result, a failed model call, or the output of a call cut
// before it finished. flower show prints a line for each where it happened,
// so a person reading the transcript sees what the model no longer does
// (issue 23).
type Left struct {
	Kind  string // "denied", "error" or "cut"
	Tool  string // the call's tool; "" for an error
	Input string // the call's command, path or input; an error's message
	// After is the last block of the view before it, nil when it comes
	// before them all: a printer puts the line after that block.
	After model.Block
}

// String is the line flower show prints for l.
func (l Left) String() string {
	switch l.Kind {
	case "denied":
		return fmt.Sprintf("· denied (not sent to the model any more): %s %s", l.Tool, l.Input)
	case "cut":
		return fmt.Sprintf("· cut before it finished (the model sees only that): %s %s", l.Tool, l.Input)
	}
	return "· model call failed (not sent to the model): " + l.Input
}

// BuildLeft is BuildWith and, in session order, what it left out.
func BuildLeft(entries []store.Entry, o Options) ([]model.Message, []Left) {
	return build(entries, o, &leftOut{})
}

// leftOut follows a build: the last block it kept and what it left out.
type leftOut struct {
	last model.Block
	left []Left
}

// see notes what entry e became: m when ok.
func (l *leftOut) see(p *pruner, e store.Entry, m model.Message, ok bool) {
	switch {
	case e.Kind == store.KindAPIError:
		l.add("error", "", e.Text)
		return
	case !ok:
		return
	case e.Kind == store.KindAssistant:
		// Walk the stored response, not m: a dropped call goes between
		// the blocks kept on either side of it.
		for _, b := range e.Message.Content {
			if u, isCall := b.(*model.ToolUse); isCall && p.dropped[u.ID] {
				l.add("denied", u.Name, Describe(u.Input))
				continue
			}
			l.keep(b)
		}
		return
	}
	for _, b := range m.Content {
		l.keep(b)
	}
	if e.Kind == store.KindResult && e.Op.Cut {
		input := e.Op.Input
		if u := p.calls[e.Op.ID]; u != nil {
			input = u.Input
		}
		l.add("cut", e.Op.Tool, Describe(input))
	}
}

func (l *leftOut) add(kind, tool, input string) {
	l.left = append(l.left, Left{Kind: kind, Tool: tool, Input: input, After: l.last})
}

// keep notes b as the last block kept, unless the repairs drop it (an
// empty text).
func (l *leftOut) keep(b model.Block) {
	if t, isText := b.(*model.Text); isText && t.Text == "" {
		return
	}
	l.last = b
}

// Describe is a call's input as a person names it: the command, else the
// file or path, else the input as JSON.
func Describe(input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) == nil {
		for _, k := range []string{"command", "file_path", "path", "pattern", "url"} {
			if s, isString := in[k].(string); isString && s != "" {
				return strings.Join(strings.Fields(s), " ")
			}
		}
	}
	return strings.TrimSpace(string(input))
}
