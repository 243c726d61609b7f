package builtin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/flower-run/flower/tool"
)

const (
	// DefaultReadLimit is how many lines Read returns when no limit is given.
	DefaultReadLimit = 2000
	// MaxLineChars is where Read cuts a long line (minified code, data).
	MaxLineChars = 2000
	// sniffLen is how much of a file is checked for NUL bytes to call it
	// binary, as git and grep do.
	sniffLen = 8000
)

// Read returns lines of a text file, numbered like cat -n.
type Read struct{ Env Env }

var _ tool.Tool = (*Read)(nil)

func (*Read) Name() string      { return "Read" }
func (*Read) Class() tool.Class { return tool.Pure }
func (*Read) Description() string {
	return `Reads a text file from the local filesystem and returns its lines numbered like "cat -n": the line number, right-aligned, then a tab, then the line.

- file_path may be absolute or relative to the workspace; paths outside the workspace are refused unless flower is configured to allow them.
- By default up to 2000 lines are returned from the start of the file. For long files pass offset (the 1-based line to start at) and limit (how many lines) to read the part you need; the result says where to continue.
- Lines longer than 2000 characters are cut.
- The line-number prefix is not part of the file: when you copy text into Edit's old_string, take only what follows the tab.
- Reading a directory, a missing file or a binary file is an error. Use Glob to find files and Grep to search their contents.
- Read a file before editing it, and re-read it if it may have changed.`
}

func (*Read) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The file to read, absolute or relative to the workspace."},
    "offset": {"type": "integer", "minimum": 1, "description": "The 1-based line number to start reading at. Only needed for files too long to read at once."},
    "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read (default 2000)."}
  },
  "required": ["file_path"]
}`)
}

type readInput struct {
	FilePath string  `json:"file_path"`
	Offset   flexInt `json:"offset"`
	Limit    flexInt `json:"limit"`
}

func (t *Read) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	env := t.Env.withDefaults()
	var in readInput
	if err := decodeInput(input, &in, "file_path"); err != nil {
		return tool.Errorf("Read: %v", err), nil
	}
	if in.Offset < 0 || in.Limit < 0 {
		return tool.Errorf("Read: offset and limit must not be negative"), nil
	}
	path, err := env.resolve(in.FilePath)
	if err != nil {
		return tool.Errorf("Read: %v", err), nil
	}
	f, err := openText(path, env.display(path))
	if err != nil {
		return tool.Errorf("Read: %v", err), nil
	}
	defer f.Close()
	offset, limit := max(int(in.Offset), 1), int(in.Limit)
	if limit == 0 {
		limit = DefaultReadLimit
	}
	return readLines(f, env.display(path), offset, limit)
}

// openText opens path for reading, refusing what Read cannot show: missing
// files, directories and binary files, each with a message that says so.
func openText(path, name string) (*os.File, error) {
	info, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("file does not exist: %s", name)
	}
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a file; use Glob or Bash ls to list it", name)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	head := make([]byte, sniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if isBinary(head[:n]) {
		f.Close()
		return nil, fmt.Errorf("%s is a binary file; Read shows text only", name)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("seek %s: %w", name, err)
	}
	return f, nil
}

func isBinary(head []byte) bool { return bytes.IndexByte(head, 0) >= 0 }

// readLines formats lines [offset, offset+limit) of r.
func readLines(r io.Reader, name string, offset, limit int) (tool.Result, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var b strings.Builder
	n := 0
	for ; ; n++ {
		line, err := readLine(br, MaxLineChars)
		if errors.Is(err, io.EOF) {
			return tool.Result{Content: readTail(&b, name, n, offset)}, nil
		}
		if err != nil {
			return tool.Errorf("Read: read %s: %v", name, err), nil
		}
		if n+1 < offset {
			continue
		}
		if n+1 >= offset+limit {
			fmt.Fprintf(&b, "\n(more lines follow; pass offset=%d to continue)", n+1)
			return tool.Result{Content: b.String()}, nil
		}
		writeNumbered(&b, n+1, line)
	}
}

// readTail finishes a read that reached the end of the file after total lines.
func readTail(b *strings.Builder, name string, total, offset int) string {
	switch {
	case total == 0:
		return fmt.Sprintf("(%s is empty)", name)
	case offset > total:
		return fmt.Sprintf("(%s has only %d lines; offset %d is past the end)", name, total, offset)
	}
	return b.String()
}

// writeNumbered writes one line the way cat -n does.
func writeNumbered(b *strings.Builder, n int, line string) {
	fmt.Fprintf(b, "%6d\t%s\n", n, line)
}

// readLine returns the next line without its newline, cut to maxChars
// runes, reading the rest of an overlong line without keeping it. It
// returns io.EOF only when no line is left.
func readLine(br *bufio.Reader, maxChars int) (string, error) {
	var buf []byte
	cut := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !cut {
			buf = append(buf, chunk...)
			if len(buf) > maxChars*utf8.UTFMax {
				buf, cut = buf[:maxChars*utf8.UTFMax], true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && len(buf) == 0 && !cut {
			return "", io.EOF
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return "", err
		}
		return cutLine(buf, maxChars, cut), nil
	}
}

// cutLine trims the line ending and cuts the text to maxChars runes,
// marking the cut so the model does not take it for the real line end.
func cutLine(buf []byte, maxChars int, cut bool) string {
	s := strings.TrimSuffix(string(buf), "\n")
	s = strings.TrimSuffix(s, "\r")
	if utf8.RuneCountInString(s) > maxChars {
		runes := 0
		for i := range s {
			if runes == maxChars {
				s, cut = s[:i], true
				break
			}
			runes++
		}
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if cut {
		s += " … [line cut]"
	}
	return s
}
