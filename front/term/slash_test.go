package term

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProjectSlashCommand: a line naming a project's slash command
// (issue 21: .claude/commands) is sent as its prompt; the reader's own
// commands keep their meaning, and an unknown one its hint.
func TestProjectSlashCommand(t *testing.T) {
	ch := &fakeChannel{}
	var said, did []string
	c := Commands{
		Status: func() { did = append(did, "status") },
		Say:    func(s string) { said = append(said, s) },
		Slash: func(line string) (string, bool) {
			if rest, ok := strings.CutPrefix(line, "/fix"); ok {
				return "Fix issue" + rest + " now.", true
			}
			return "", false
		},
	}
	ReadInput(context.Background(), strings.NewReader("/fix 42\n/status\n/nope\n"), ch, c)
	if diff := cmp.Diff([]string{"mail: Fix issue 42 now."}, ch.log); diff != "" {
		t.Errorf("sent (-want +got):\n%s", diff)
	}
	if len(did) != 1 || len(said) != 1 || !strings.Contains(said[0], "unknown command /nope") {
		t.Errorf("did %v, said %q", did, said)
	}
}
