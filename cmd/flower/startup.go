package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/workflow/starter"
)

// The start-up prompt of seed 000: a bare flower on a terminal asks what
// to do. With history it offers to continue (Enter), to add something
// new (a line), or to start another thing (/new); in an empty directory
// it asks for the task. Without a terminal a bare flower behaves as
// before: it continues, or says there is nothing to continue.

const (
	continuePrompt = "continue where it stopped%s? Enter = continue; or type something new; /new = start another thing (Ctrl-C quits)\n> "
	taskPrompt     = "what should I do? One sentence is enough; Enter starts (Ctrl-C quits)\n> "
)

// startup is what the person chose at the start-up prompt.
type startup struct {
	phrase string // the task, or words added to the thread
	fresh  bool   // /new: archive the thread and start phrase afresh
}

// askStartup asks the start-up prompt on out and reads the answer from in
// (term.ReadLine: nothing after the line is taken from the terminal
// reader that follows). history says whether there is a thread to
// continue.
// where, when not "", says where the work in flight stopped.
func askStartup(in io.Reader, out io.Writer, history bool, where string) (startup, error) {
	if history {
		if where != "" {
			where = " (" + where + ")"
		}
		fmt.Fprintf(out, continuePrompt, where)
		line, err := term.ReadLine(in)
		if err != nil || line != "/new" {
			return startup{phrase: line}, err
		}
		fmt.Fprint(out, taskPrompt)
		line, err = term.ReadLine(in)
		if err == nil && line == "" {
			err = errors.New("no task given")
		}
		return startup{phrase: line, fresh: true}, err
	}
	fmt.Fprint(out, taskPrompt)
	line, err := term.ReadLine(in)
	if err == nil && line == "" {
		err = errors.New("no task given")
	}
	return startup{phrase: line}, err
}

// hasHistory reports, reading only, whether the workspace has a thread a
// bare flower could continue.
// whereStopped is flower.WhereStopped of this workspace, "" when it
// cannot be read.
func whereStopped(ctx context.Context, g *globals) string {
	ws, s, err := readStore(g)
	if err != nil || s == nil {
		return ""
	}
	defer s.Close()
	return flower.WhereStopped(ctx, s, g.runDir, ws)
}

func hasHistory(g *globals) bool {
	ws, err := filepath.Abs(g.workspace)
	return err == nil && (g.hasStore() || starter.WakeState(ws, nil).Waking)
}
