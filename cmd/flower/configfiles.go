package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/flower-run/flower/config"
)

// printFilesRead lists, a line each, the configuration files a run
// reads (issue 21 item 5).
func printFilesRead(out io.Writer, files []config.ReadFile) {
	for _, f := range files {
		fmt.Fprintf(out, "config     %s (%s)\n", tilde(f.Path), f.What)
	}
}

// slashPrompt expands a prompt "/name args" naming one of the project's
// .claude/commands (issue 21 item 3); any other prompt is kept.
func slashPrompt(g *globals, prompt string) (string, error) {
	ws, err := filepath.Abs(g.workspace)
	if err != nil {
		return "", usageErr("--workspace: %v", err)
	}
	out, _, err := config.ExpandSlash(ws, prompt)
	if err != nil {
		return "", usageErr("%v", err)
	}
	return out, nil
}

// terminalSlash expands a typed "/name args" naming one of the project's
// slash commands; an unknown name stays the reader's command (its hint).
func terminalSlash(ws, line string) (string, bool) {
	out, ok, err := config.ExpandSlash(ws, line)
	return out, ok && err == nil
}
