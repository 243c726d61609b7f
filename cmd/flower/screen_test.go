package main

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// screen replays what a program wrote to its terminal as a terminal shows
// it: the rows (scrollback included) after cursor moves, line erases and
// saved cursors, so a test reads what a person sees, not the bytes. It
// knows the escapes flower writes; colours and modes are ignored.
type screen struct {
	rows       [][]rune
	row, col   int
	width      int
	savR, savC int
}

func newScreen(width int, out string) *screen {
	s := &screen{width: width, rows: [][]rune{nil}}
	s.write(out)
	return s
}

// Lines are the screen's rows, trailing blanks trimmed.
func (s *screen) Lines() []string {
	var ls []string
	for _, r := range s.rows {
		ls = append(ls, strings.TrimRight(string(r), " "))
	}
	return ls
}

func (s *screen) String() string { return strings.Join(s.Lines(), "\n") }

func (s *screen) write(out string) {
	for i := 0; i < len(out); {
		c := out[i]
		switch {
		case c == '\x1b':
			i += s.escape(out[i:])
			continue
		case c == '\r':
			s.col = 0
		case c == '\n':
			s.down()
		case c == '\b':
			s.col = max(s.col-1, 0)
		case c < ' ':
		default:
			r, n := utf8.DecodeRuneInString(out[i:])
			s.put(r)
			i += n
			continue
		}
		i++
	}
}

func (s *screen) down() {
	s.row++
	for len(s.rows) <= s.row {
		s.rows = append(s.rows, nil)
	}
}

func (s *screen) put(r rune) {
	if s.col >= s.width {
		s.col = 0
		s.down()
	}
	line := s.rows[s.row]
	for len(line) <= s.col {
		line = append(line, ' ')
	}
	line[s.col] = r
	s.rows[s.row] = line
	s.col++
}

// escape applies the sequence at the start of seq and says its length.
func (s *screen) escape(seq string) int {
	if len(seq) < 2 {
		return len(seq)
	}
	switch seq[1] {
	case '7':
		s.savR, s.savC = s.row, s.col
		return 2
	case '8':
		s.row, s.col = s.savR, s.savC
		return 2
	case ']': // OSC: up to BEL or ST
		if end := strings.IndexAny(seq, "\a"); end > 0 {
			return end + 1
		}
		if end := strings.Index(seq, "\x1b\\"); end > 0 {
			return end + 2
		}
		return len(seq)
	case '[':
	default:
		return 2
	}
	end := 2
	for end < len(seq) && (seq[end] < 0x40 || seq[end] > 0x7e) {
		end++
	}
	if end == len(seq) {
		return end
	}
	params := seq[2:end]
	n, err := strconv.Atoi(strings.TrimPrefix(params, "?"))
	if err != nil || n == 0 {
		n = 1
	}
	line := s.rows[s.row]
	switch seq[end] {
	case 'A':
		s.row = max(s.row-n, 0)
	case 'B':
		for range n {
			s.down()
		}
	case 'C':
		s.col += n
	case 'D':
		s.col = max(s.col-n, 0)
	case 'G':
		s.col = n - 1
	case 'K':
		switch params {
		case "", "0":
			if s.col < len(line) {
				s.rows[s.row] = line[:s.col]
			}
		case "2":
			s.rows[s.row] = nil
		}
	case 'J':
		if params == "" || params == "0" {
			if s.col < len(line) {
				s.rows[s.row] = line[:s.col]
			}
			s.rows = s.rows[:s.row+1]
		}
	}
	return end + 1
}
