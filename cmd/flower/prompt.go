package main

import (
	"io"
	"os"
	"strings"

	"github.com/flower-run/flower/front/term"
)

// maxPrompt bounds a prompt read from a file or standard input. It is far
// above the 128 KiB the kernel allows one argument, which is why -f and
// stdin exist (issue 11).
const maxPrompt = 16 << 20

// readPrompt reads a prompt from a file, "-" being standard input.
func readPrompt(file string, stdin io.Reader) (string, error) {
	var r io.Reader = stdin
	name := "standard input"
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return "", usageErr("-f %s: %v", file, err)
		}
		defer f.Close()
		r, name = f, file
	}
	data, err := io.ReadAll(io.LimitReader(r, maxPrompt+1))
	if err != nil {
		return "", usageErr("read the prompt from %s: %v", name, err)
	}
	if len(data) > maxPrompt {
		return "", usageErr("the prompt in %s is over %d MiB: put the material in a file in the workspace and name it in the prompt", name, maxPrompt>>20)
	}
	text := strings.TrimSpace(string(data))
	if text == "" {
		return "", usageErr("the prompt in %s is empty", name)
	}
	return text, nil
}

// oncePrompt is flower once's prompt: -f FILE, the argument ("-" is
// standard input), or, with neither, standard input when it is not a
// terminal (echo "..." | flower once), as Claude Code's -p reads it.
func oncePrompt(args []string, file string, stdin io.Reader) (string, error) {
	switch {
	case file != "" && len(args) > 0:
		return "", usageErr("give the prompt as an argument or with -f %s, not both", file)
	case file != "":
		return readPrompt(file, stdin)
	case len(args) == 1 && args[0] == "-":
		return readPrompt("-", stdin)
	case len(args) == 1:
		return args[0], nil
	case stdin != nil && !term.IsTerminal(stdin):
		p, err := readPrompt("-", stdin)
		if err != nil {
			return "", nil // nothing piped: the caller says a PROMPT is needed
		}
		return p, nil
	}
	return "", nil
}

// wakeTask is the task of flower [TASK] given as -f FILE or "-".
func wakeTask(phrase, file string, stdin io.Reader) (string, error) {
	switch {
	case file != "" && phrase != "":
		return "", usageErr("give the task as an argument or with -f %s, not both", file)
	case file != "":
		return readPrompt(file, stdin)
	case phrase == "-":
		return readPrompt("-", stdin)
	}
	return phrase, nil
}
