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
