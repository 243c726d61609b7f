package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestAskStartup(t *testing.T) { // seed 000: the start-up prompt
	tests := []struct {
		name    string
		history bool
		typed   string
		want    startup
		rest    string // what is left unread for the terminal reader
		err     bool
	}{
		{"continue", true, "\nnote for later\n", startup{}, "note for later\n", false},
		{"something new", true, "also say bye\n", startup{phrase: "also say bye"}, "", false},
		{"new thread", true, "/new\nwrite a CLI\nmore\n", startup{phrase: "write a CLI", fresh: true}, "more\n", false},
		{"new thread without task", true, "/new\n\n", startup{fresh: true}, "", true},
		{"empty dir", false, "write a CLI\n", startup{phrase: "write a CLI"}, "", false},
		{"empty dir, Enter", false, "\n", startup{}, "", true},
		{"quit", true, "half a line", startup{}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := strings.NewReader(tt.typed)
			var out strings.Builder
			got, err := askStartup(in, &out, tt.history, "run r1 at step work, cut during Bash (npm test)")
			if (err != nil) != tt.err || (err == nil && got != tt.want) {
				t.Fatalf("askStartup(%q) = %+v, %v; want %+v, error %v", tt.typed, got, err, tt.want, tt.err)
			}
			rest := tt.typed[len(tt.typed)-in.Len():]
			if !tt.err && rest != tt.rest {
				t.Errorf("left %q unread, want %q: the line reader must not read past the answer", rest, tt.rest)
			}
			wantPrompt := taskPrompt
			if tt.history {
				wantPrompt = fmt.Sprintf(continuePrompt, " (run r1 at step work, cut during Bash (npm test))")
			}
			if !strings.HasPrefix(out.String(), wantPrompt) {
				t.Errorf("prompt %q, want %q", out.String(), wantPrompt)
			}
		})
	}
}
