package flower

import (
	"fmt"
	"io"
	"strings"

	"github.com/flower-run/flower/front/term"
)

// Allow is flower allow (issue 20 item 2): it shows a person at the
// terminal in (with out) what changed in the confirmed files of ws since
// they were last approved, and approves the new content after a yes. It
// needs a terminal, so the agent cannot approve its own changes: without
// one, or after a no, it is a *UsageError of one line.
func Allow(ws string, in io.Reader, out io.Writer) error {
	names, diff, err := ConfigChanges(ws)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		fmt.Fprintf(out, "flower: the config of %s is as approved; nothing to do\n", ws)
		return nil
	}
	what := strings.Join(names, ", ")
	if !term.Interactive(in, out) {
		return usage("flower allow needs a person at a terminal (it shows the diff of %s and asks): run it yourself", what)
	}
	ok, _ := AskApproval(in, out)(diff)
	if !ok {
		return usage("%s: not approved (the answer was not yes)", what)
	}
	if err := ApproveConfig(ws); err != nil {
		return err
	}
	fmt.Fprintf(out, "flower: approved %s for %s\n", what, ws)
	return nil
}

// AskApproval is the Confirmer of a terminal: it shows the diff on out
// and reads y or n from in (term.Confirm: nothing typed after the answer
// is taken from the run; no line is no).
func AskApproval(in io.Reader, out io.Writer) Confirmer {
	return func(diff string) (bool, error) {
		fmt.Fprintf(out, "flower: the workspace config changed since it was last approved (the agent can write these files):\n%s", diff)
		return term.Confirm(in, out, "Apply these changes? [y/N] "), nil
	}
}
