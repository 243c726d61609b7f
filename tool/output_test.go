package tool

import (
	"strings"
	"testing"
)

func TestCapWriter(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{"under the cap", 10, []string{"abc", "de"}, "abcde"},
		{"exactly the cap", 10, []string{"0123456789"}, "0123456789"},
		{"head and tail", 10, []string{"0123456789", "abcdefghij"}, "01234\n… 10 bytes cut …\nfghij"},
		{"many small writes", 4, strings.Split("abcdefghijklmnop", ""), "ab\n… 12 bytes cut …\nop"},
		{"split characters", 4, []string{"aé", "xxxxé", "y"}, "a\uFFFD\n… 6 bytes cut …\n\uFFFDy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewCapWriter(tt.limit)
			for _, s := range tt.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := w.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
