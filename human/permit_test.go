package human

import (
	"context"
	"testing"
)

// TestAskPermission: the person's answer comes back; the same call asked
// again (after a crash) gets it without a second question; unattended
// settles at once as a timeout.
func TestAskPermission(t *testing.T) {
	c := New(Options{Timeout: Forever, Workbench: t.TempDir(), Clock: newFakeClock()})
	go func() {
		a, err := c.NextAsk(context.Background())
		if err == nil {
			c.Answer(a.ID, "allow once")
		}
	}()
	opts := []string{"allow once", "allow for this run", "deny"}
	ans, state, err := c.AskPermission(context.Background(), "toolu_1", "Allow this Bash call: git push", opts)
	if err != nil || ans != "allow once" || state != "answered" {
		t.Fatalf("AskPermission = %q, %q, %v", ans, state, err)
	}
	ans, state, _ = c.AskPermission(context.Background(), "toolu_1", "Allow this Bash call: git push", opts)
	if ans != "allow once" || state != "answered" || len(c.Pending()) != 0 {
		t.Fatalf("asked again: %q, %q, pending %v", ans, state, c.Pending())
	}

	u := New(Options{Timeout: Unattended, Workbench: t.TempDir()})
	if _, state, err := u.AskPermission(context.Background(), "toolu_2", "Allow?", opts); err != nil || state != string(Timeout) {
		t.Fatalf("unattended: %q, %v", state, err)
	}
}
