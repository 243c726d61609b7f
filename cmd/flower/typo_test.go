package main

import (
	"strings"
	"testing"
)

func TestNotACommand(t *testing.T) { // issue 11: flower stauts
	root := newRoot()
	for _, tt := range []struct {
		phrase string
		want   string // "" : a task
	}{
		{"stauts", "did you mean flower status?"},
		{"statsu", "did you mean flower status?"},
		{"verison", "did you mean flower version?"},
		{"sesions", "did you mean flower sessions?"},
		{"discrad", "did you mean flower discard?"},
		{"ps", "did you mean flower ps?"},
		{"write a CLI for X", ""},
		{"refactor", ""},
		{"", ""},
	} {
		err := notACommand(root, tt.phrase)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%q refused: %v", tt.phrase, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%q: %v, want %q", tt.phrase, err, tt.want)
		}
	}
}

// TestUsageLines: a mistyped flag gets the closest one, a missing id says
// where the ids are; one line, exit 2, no cobra wording (issue 23).
func TestUsageLines(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--modle", "demo", "x"}, "did you mean --model? (flower --help"},
		{[]string{"once", "--resum", "x"}, "did you mean --resume? (flower once --help"},
		{[]string{"once", "--zzzz"}, "unknown flag --zzzz (flower once --help"},
		{[]string{"show"}, "flower show needs one SESSION id (got 0): flower sessions lists them"},
		{[]string{"discard"}, "flower discard needs one RUN id (got 0): flower ps lists"},
	} {
		r := runFlower(t, t.TempDir(), nil, tt.args...)
		line := strings.TrimSpace(r.stderr)
		if r.code != exitUsage || !strings.Contains(line, tt.want) || strings.Contains(line, "\n") || strings.Contains(line, "accepts") {
			t.Errorf("flower %v: exit %d, %q; want exit 2 and one line with %q", tt.args, r.code, line, tt.want)
		}
	}
}
