package term

import (
	"fmt"
	"io"
	"os"
	"strings"

	xterm "golang.org/x/term"
)

// IsTerminal reports whether v is a terminal. A character device is not
// enough: /dev/null is one, and a script that runs flower <&- >/dev/null
// must not meet a prompt.
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && xterm.IsTerminal(int(f.Fd()))
}

// Interactive reports whether both ends are a terminal: only then does a
// front end ask before it starts.
func Interactive(in io.Reader, out io.Writer) bool { return IsTerminal(in) && IsTerminal(out) }

// ReadLine reads up to a newline without reading past it, one byte at a
// time, so that nothing after the line is taken from the reader that
// follows (ReadInput). End of input before a newline is an error: the
// person quit.
func ReadLine(in io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := in.Read(buf)
		if n == 1 && buf[0] == '\n' {
			return strings.TrimSpace(b.String()), nil
		}
		if n == 1 {
			b.WriteByte(buf[0])
		}
		if err != nil {
			return "", fmt.Errorf("no answer: %w", err)
		}
	}
}

// Confirm asks question on out and reports whether the line read from in
// (ReadLine: nothing after it is taken) is y or yes; no line (the input
// ended) is no.
func Confirm(in io.Reader, out io.Writer, question string) bool {
	fmt.Fprint(out, question)
	line, _ := ReadLine(in)
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}
