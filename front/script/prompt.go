package script

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/front/term"
)

// MaxPrompt bounds a prompt read from a file or standard input. It is far
// above the 128 KiB the kernel allows one argument, which is why -f and
// stdin exist (issue 11).
const MaxPrompt = 16 << 20

// ReadPrompt reads a prompt from a file, "-" being standard input. Its
// errors are *flower.UsageError: one line naming the file and the fix.
func ReadPrompt(file string, stdin io.Reader) (string, error) {
	var r io.Reader = stdin
	name := "standard input"
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return "", usage("-f %s: %v", file, err)
		}
		defer f.Close()
		r, name = f, file
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxPrompt+1))
	if err != nil {
		return "", usage("read the prompt from %s: %v", name, err)
	}
	if len(data) > MaxPrompt {
		return "", usage("the prompt in %s is over %d MiB: put the material in a file in the workspace and name it in the prompt", name, MaxPrompt>>20)
	}
	text := strings.TrimSpace(string(data))
	if text == "" {
		return "", usage("the prompt in %s is empty", name)
	}
	return text, nil
}

// Prompt is flower once's (and -p's) prompt: -f FILE, the argument ("-"
// is standard input), or, with neither, standard input when it is not a
// terminal (echo "..." | flower once), as Claude Code's -p reads it. ""
// when there is none: the caller says a prompt is needed.
func Prompt(args []string, file string, stdin io.Reader) (string, error) {
	switch {
	case file != "" && len(args) > 0:
		return "", usage("give the prompt as an argument or with -f %s, not both", file)
	case file != "":
		return ReadPrompt(file, stdin)
	case len(args) == 1 && args[0] == "-":
		return ReadPrompt("-", stdin)
	case len(args) == 1:
		return args[0], nil
	case stdin != nil && !term.IsTerminal(stdin):
		p, err := ReadPrompt("-", stdin)
		if err != nil {
			return "", nil // nothing piped: the caller says a PROMPT is needed
		}
		return p, nil
	}
	return "", nil
}

// Task is the task of flower [TASK] given as -f FILE or "-".
func Task(phrase, file string, stdin io.Reader) (string, error) {
	switch {
	case file != "" && phrase != "":
		return "", usage("give the task as an argument or with -f %s, not both", file)
	case file != "":
		return ReadPrompt(file, stdin)
	case phrase == "-":
		return ReadPrompt("-", stdin)
	}
	return phrase, nil
}

func usage(format string, args ...any) error {
	return &flower.UsageError{Err: fmt.Errorf(format, args...)}
}
