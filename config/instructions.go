package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Project instruction files (R10.2), as Claude Code and the other agents
// read them: AGENTS.md at the workspace root, CLAUDE.md when there is no
// AGENTS.md, and the person's own AGENTS.md in UserDir.
const (
	AgentsFile = "AGENTS.md"
	ClaudeFile = "CLAUDE.md"
)

// maxInstructions bounds what one instruction file adds to every system
// prompt; a longer file is cut with a note saying where to read the rest.
const maxInstructions = 64 << 10

// Instruction is one instruction file and what it says.
type Instruction struct {
	Path string // as found
	Text string
}

// Instructions reads the instruction files that apply to workspace: the
// user's first, then the project's, so the project's word comes last. A
// missing or empty file is skipped; an unreadable one is reported in its
// place, so the model and the banner say why it is not followed.
func Instructions(workspace string) []Instruction {
	var out []Instruction
	if dir := UserDir(); dir != "" {
		out = appendFile(out, filepath.Join(dir, AgentsFile))
	}
	n := len(out)
	out = appendFile(out, filepath.Join(workspace, AgentsFile))
	if len(out) == n {
		out = appendFile(out, filepath.Join(workspace, ClaudeFile))
	}
	return out
}

func appendFile(out []Instruction, path string) []Instruction {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return out
	case err != nil:
		return append(out, Instruction{Path: path, Text: fmt.Sprintf("(could not be read: %v)", err)})
	}
	text := strings.TrimSpace(string(data))
	if text == "" {
		return out
	}
	if len(text) > maxInstructions {
		text = text[:maxInstructions] + fmt.Sprintf("\n\n[cut at %d KiB: read %s for the rest]", maxInstructions>>10, path)
	}
	return append(out, Instruction{Path: path, Text: text})
}

// InstructionsPrompt is the instructions as a block of a system prompt;
// "" when there are none.
func InstructionsPrompt(ins []Instruction) string {
	if len(ins) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Standing instructions for this project. Follow them unless the task or the person says otherwise; the later file wins where they disagree.")
	for _, in := range ins {
		fmt.Fprintf(&b, "\n\n<instructions file=%q>\n%s\n</instructions>", in.Path, in.Text)
	}
	return b.String()
}
