package term

import (
	"strings"

	"github.com/flower-run/flower/event"
)

// Text from the agent's world (tool output, model text, file names,
// questions) reaches the terminal as text only (issue 10): an escape
// sequence in it could set the clipboard (OSC 52), retitle the window,
// clear the screen, or hide what was printed. Clean removes them; flower's
// own colours are added after, by the renderer.

// Clean returns s without escape sequences (CSI, OSC, DCS and the other
// string sequences, 7- and 8-bit), other control characters (tab and
// newline stay) and invalid UTF-8 (shown as U+FFFD).
func Clean(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	rs := []rune(s) // invalid bytes become U+FFFD
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == 0x1b:
			i = skipEscape(rs, i)
		case r >= 0x80 && r <= 0x9f:
			i = skipC1(rs, i)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			// other C0 controls: bell, backspace, carriage return, ...
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isPlain reports whether s needs no cleaning: printable ASCII, tab and
// newline only (the common case, kept allocation-free).
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// skipEscape returns the index of the last rune of the sequence that the
// ESC at i starts.
func skipEscape(rs []rune, i int) int {
	if i+1 >= len(rs) {
		return i
	}
	switch rs[i+1] {
	case '[':
		return skipCSI(rs, i+2)
	case ']', 'P', 'X', '^', '_':
		return skipString(rs, i+2)
	}
	return i + 1 // a two-character sequence (ESC c resets the terminal)
}

// skipC1 skips an 8-bit control at i and the sequence it starts.
func skipC1(rs []rune, i int) int {
	switch rs[i] {
	case 0x9b:
		return skipCSI(rs, i+1)
	case 0x9d, 0x90, 0x98, 0x9e, 0x9f:
		return skipString(rs, i+1)
	}
	return i
}

// skipCSI skips parameters and intermediates up to the final byte.
func skipCSI(rs []rune, j int) int {
	for ; j < len(rs); j++ {
		if rs[j] >= 0x40 && rs[j] <= 0x7e {
			return j
		}
	}
	return len(rs) - 1
}

// skipString skips a string sequence (OSC, DCS, SOS, PM, APC) up to its
// terminator: BEL, ESC \ or the 8-bit ST. An unterminated one runs to the
// end of the text: a terminal would swallow it too.
func skipString(rs []rune, j int) int {
	for ; j < len(rs); j++ {
		switch rs[j] {
		case 0x07, 0x9c:
			return j
		case 0x1b:
			if j+1 < len(rs) && rs[j+1] == '\\' {
				return j + 1
			}
		}
	}
	return len(rs) - 1
}

// cleanEvent is e with every text the renderer may print cleaned.
func cleanEvent(e event.Event) event.Event {
	e.Text, e.Tool = Clean(e.Text), Clean(e.Tool)
	if len(e.Payload) == 0 {
		return e
	}
	p := make(map[string]any, len(e.Payload))
	for k, v := range e.Payload {
		switch v := v.(type) {
		case string:
			p[k] = Clean(v)
		case []string:
			c := make([]string, len(v))
			for i, s := range v {
				c[i] = Clean(s)
			}
			p[k] = c
		default:
			p[k] = v
		}
	}
	e.Payload = p
	return e
}
