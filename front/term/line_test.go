package term_test

import (
	"os"
	"strings"
	"testing"

	"github.com/flower-run/flower/front/term"
)

// TestDevNullIsNoTerminal: a bare flower run with stdin and stdout on
// /dev/null (a character device, not a terminal) never prompts: it
// continues, as with no terminal at all.
func TestDevNullIsNoTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if term.Interactive(null, null) || term.IsTerminal(null) {
		t.Error("/dev/null was taken for a terminal: the start-up prompt would read EOF and fail")
	}
}

// TestReadLineLeavesTheRest reads one answer and nothing after it: the
// terminal's reader that follows gets the rest.
func TestReadLineLeavesTheRest(t *testing.T) {
	in := strings.NewReader("  yes \nnote for later\n")
	if line, err := term.ReadLine(in); err != nil || line != "yes" {
		t.Fatalf("ReadLine = %q, %v; want yes", line, err)
	}
	if in.Len() != len("note for later\n") {
		t.Errorf("%d bytes left, want the next line whole", in.Len())
	}
	if _, err := term.ReadLine(strings.NewReader("half a line")); err == nil {
		t.Error("end of input before a newline: no error, want one (the person quit)")
	}
}

// TestClip: a long line is cut to n runes, the last an ellipsis; a short
// one is kept (flower sessions' TASK column, the question lines).
func TestClip(t *testing.T) {
	if got := term.Clip("héllo wörld", 6); got != "héllo…" {
		t.Errorf("%q", got)
	}
	if got := term.Clip("short", 6); got != "short" {
		t.Errorf("%q", got)
	}
}

// TestConfirm: y or yes (any case) is yes; anything else, or no line, is
// no; the question is asked once and nothing after the line is read.
func TestConfirm(t *testing.T) {
	for in, want := range map[string]bool{"y\n": true, " YES \nrest": true, "n\n": false, "yess\n": false, "": false, "y": false} {
		var out strings.Builder
		r := strings.NewReader(in)
		if got := term.Confirm(r, &out, "go? [y/N] "); got != want || out.String() != "go? [y/N] " {
			t.Errorf("%q: %v %q, want %v", in, got, out.String(), want)
		}
		if in == " YES \nrest" && r.Len() != 4 {
			t.Errorf("read past the line: %d left", r.Len())
		}
	}
}
