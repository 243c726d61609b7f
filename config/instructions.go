package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Project instruction files (R10.2, issue 21), as Claude Code and the
// other agents read them: AGENTS.md and CLAUDE.md at the workspace root
// (both, AGENTS.md first), the person's CLAUDE.local.md beside them, and
// the person's own AGENTS.md in UserDir and ~/.claude/CLAUDE.md.
const (
	AgentsFile      = "AGENTS.md"
	ClaudeFile      = "CLAUDE.md"
	ClaudeLocalMemo = "CLAUDE.local.md"
)

// maxInstructions bounds what one instruction file adds to every system
// prompt; a longer file is cut with a note saying where to read the rest.
const maxInstructions = 64 << 10

// maxImportDepth is how deep @path imports nest, as in Claude Code.
const maxImportDepth = 5

// Instruction is one instruction file and what it says.
type Instruction struct {
	Path string // as found
	Text string
	// From is the file whose @path imported this one; "" for a file read
	// in its own right.
	From string
}

// Instructions reads the instruction files that apply to workspace: the
// user's first, then the project's, then the person's local file, so the
// project's word comes after the user's. Each file's @path imports follow
// it. A missing or empty file is skipped; an unreadable one is reported in
// its place, so the model and the banner say why it is not followed.
func Instructions(workspace string) []Instruction {
	var names []string
	if dir := UserDir(); dir != "" {
		names = append(names, filepath.Join(dir, AgentsFile))
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		names = append(names, filepath.Join(home, ClaudeDir, ClaudeFile))
	}
	names = append(names, filepath.Join(workspace, AgentsFile), filepath.Join(workspace, ClaudeFile),
		filepath.Join(workspace, ClaudeLocalMemo))
	r := reader{seen: map[string]bool{}}
	for _, name := range names {
		r.read(name, "", 0)
	}
	return r.out
}

// reader reads instruction files and their imports, each file once.
type reader struct {
	out  []Instruction
	seen map[string]bool
}

// read adds path (imported by from at depth) and, after it, its imports.
// A file already read is not read again: that refuses import cycles and
// keeps a file imported twice from counting twice.
func (r *reader) read(path, from string, depth int) {
	key := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		key = real
	}
	if r.seen[key] {
		return
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return
	case err != nil:
		r.seen[key] = true
		r.out = append(r.out, Instruction{Path: path, From: from, Text: fmt.Sprintf("(could not be read: %v)", err)})
		return
	}
	r.seen[key] = true
	text := strings.TrimSpace(string(data))
	if text == "" {
		return
	}
	if len(text) > maxInstructions {
		text = text[:maxInstructions] + fmt.Sprintf("\n\n[cut at %d KiB: read %s for the rest]", maxInstructions>>10, path)
	}
	r.out = append(r.out, Instruction{Path: path, From: from, Text: text})
	if depth >= maxImportDepth {
		return
	}
	for _, imp := range imports(text) {
		r.read(importPath(path, imp), path, depth+1)
	}
}

// importRE finds @path where a word starts: @docs/style.md, @~/x.md,
// @../shared/AGENTS.md (not mail@example.com).
var importRE = regexp.MustCompile(`(?:^|[\s(])@((?:~/|\.{1,2}/|/)?[A-Za-z0-9_.\-/]+)`)

// imports are the @paths of text outside code: fenced blocks and inline
// code spans do not import, as in Claude Code.
func imports(text string) []string {
	var out []string
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		for _, m := range importRE.FindAllStringSubmatch(codeSpans.ReplaceAllString(line, " "), -1) {
			if p := strings.TrimRight(m[1], ".,;:)"); p != "" && p != "/" {
				out = append(out, p)
			}
		}
	}
	return out
}

var codeSpans = regexp.MustCompile("`+[^`]*`+")

// importPath resolves an import: ~ is the home directory, a relative
// path is relative to the importing file's directory.
func importPath(from, p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, _ := os.UserHomeDir()
		return filepath.Join(home, rest)
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(filepath.Dir(from), p)
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
		if in.From != "" {
			fmt.Fprintf(&b, "\n\n<instructions file=%q imported_by=%q>\n%s\n</instructions>", in.Path, in.From, in.Text)
			continue
		}
		fmt.Fprintf(&b, "\n\n<instructions file=%q>\n%s\n</instructions>", in.Path, in.Text)
	}
	return b.String()
}
