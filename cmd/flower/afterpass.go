package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/term"
	"github.com/flower-run/flower/wake"
	"github.com/flower-run/flower/workflow/starter"
)

// After a passed verdict a bare flower on a terminal does not pay for
// work and judge again (issue 11): it shows the banner and the verdict
// and asks. Enter has a fresh judge check the work again, and only that;
// a line continues the thread with it (the judge checks it too); /new
// starts another thing. Unattended (no terminal, or --timeout 0) it says
// the verdict and exits 0 without a model call, as before.

const passPrompt = "the last run passed. Enter = have a fresh judge check it again (no work); or type what to change; /new = start another thing (Ctrl-C quits)\n> "

// passedPlan reports, reading only, whether a bare wake here would find
// the last run passed, with the banner and the verdict to show.
func passedPlan(ctx context.Context, g *globals) (shown string, ok bool) {
	ws, s, err := readStore(g)
	if err != nil || s == nil {
		return "", false
	}
	defer s.Close()
	p, err := wake.Decide(ctx, s, ws, wake.Options{})
	if err != nil || p.Action != wake.Pass {
		return "", false
	}
	return flower.Banner(ctx, s, ws, p.State, nil) + flower.InstructionsNote(ws) +
		fmt.Sprintf("\n✓ run %s passed its verdict\n%s", p.Last.ID, indent(p.Last.Findings)), true
}

// askAfterPass asks what to do after a pass; recheck is Enter.
func askAfterPass(in io.Reader, out io.Writer, shown string) (s startup, recheck bool, err error) {
	fmt.Fprintln(out, shown)
	fmt.Fprint(out, passPrompt)
	line, err := term.ReadLine(in)
	switch {
	case err != nil:
		return startup{}, false, err
	case line == "":
		return startup{}, true, nil
	case line != "/new":
		return startup{phrase: line}, false, nil
	}
	fmt.Fprint(out, taskPrompt)
	if line, err = term.ReadLine(in); err == nil && line == "" {
		err = fmt.Errorf("no task given")
	}
	return startup{phrase: line, fresh: true}, false, err
}

// recheckable refuses --recheck where there is nothing to check.
func recheckable(g *globals) error {
	ws, _ := filepath.Abs(g.workspace)
	if !g.hasStore() || !starter.WakeState(ws, nil).Waking {
		return usageErr("--recheck: nothing to check in %s: start with flower \"describe the task\"", tilde(ws))
	}
	return nil
}
