package permission

import "testing"

// TestGateModes: Claude Code's permission modes over the rules' decisions
// (issue 21): deny always wins; plan runs no effect; bypass asks nothing;
// acceptEdits runs file edits; default asks effects no allow rule names
// only when someone answers.
func TestGateModes(t *testing.T) {
	allow, ruled, ask, deny := Decision{Action: Allow}, Decision{Action: Allow, Rule: "Bash(ls:*)"},
		Decision{Action: Ask, Rule: "Bash(git push:*)"}, Decision{Action: Deny, Rule: "Bash(rm:*)"}
	tests := []struct {
		mode       Mode
		askEffects bool
		d          Decision
		tool       string
		effect     bool
		want       Action
	}{
		{ModePlan, false, allow, "Bash", true, Deny},
		{ModePlan, false, allow, "Read", false, Allow},
		{ModePlan, false, deny, "Read", false, Deny},
		{ModeBypass, false, ask, "Bash", true, Allow},
		{ModeBypass, false, deny, "Bash", true, Deny},
		{ModeAcceptEdits, true, allow, "Write", true, Allow},
		{ModeAcceptEdits, true, allow, "Bash", true, Ask},
		{ModeDefault, true, allow, "Bash", true, Ask},
		{ModeDefault, true, ruled, "Bash", true, Allow},
		{ModeDefault, true, allow, "Read", false, Allow},
		{ModeDefault, false, allow, "Bash", true, Allow},
		{ModeDefault, false, ask, "Bash", true, Ask},
	}
	for _, tt := range tests {
		if got := NewGate(tt.mode, tt.askEffects).Decide(tt.d, tt.tool, tt.effect); got.Action != tt.want {
			t.Errorf("%s (ask %v) %s %v: %s, want %s", tt.mode, tt.askEffects, tt.tool, tt.d, got.Action, tt.want)
		}
	}
	var g *Gate
	if g.Decide(allow, "Bash", true).Action != Allow || g.Mode() != ModeDefault {
		t.Error("a nil gate changed a decision")
	}
	if _, err := ParseMode("auto"); err == nil {
		t.Error("ParseMode took an unknown mode")
	}
}
