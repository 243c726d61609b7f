package headless

import (
	"fmt"
	"io"
	"strings"

	"github.com/flower-run/flower/permission"
)

// Route reports whether args, a command line without the program name, is
// Claude Code's headless one (claude -p ..., or the Claude Agent SDK's
// --output-format stream-json --input-format stream-json ...): one of
// those flags before any "--", and a first word that is not one of the
// program's own commands (isCommand).
func Route(args []string, isCommand func(word string) bool) bool {
	if len(args) == 0 || isCommand(args[0]) {
		return false
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "-p", "--print", "--input-format", "--output-format":
			return true
		}
	}
	return false
}

// NoteIgnored writes a line on w for each long flag of args that known
// does not report: the SDK passes flags of newer Claude Codes, which
// flower accepts and ignores (--debug names them).
func NoteIgnored(w io.Writer, args []string, known func(name string) bool) {
	for _, a := range args {
		if a == "--" {
			return
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if strings.HasPrefix(a, "--") && !known(name) {
			fmt.Fprintf(w, "flower: debug: Claude Code flag --%s ignored\n", name)
		}
	}
}

// Flags are claude -p's settings as given on its command line, before
// they are checked.
type Flags struct {
	Output, Input, Mode, PromptTool string
	SkipPermissions                 bool // --dangerously-skip-permissions
}

// Check refuses a setting flower does not have, with one line naming the
// flag and what it takes, and returns the permission mode in force.
func (f Flags) Check() (permission.Mode, error) {
	switch f.Output {
	case FormatText, FormatJSON, FormatStreamJSON:
	default:
		return "", fmt.Errorf("--output-format %q: use text, json, stream-json or flower-events", f.Output)
	}
	mode, err := permission.ParseMode(f.Mode)
	if err != nil {
		return "", fmt.Errorf("--permission-mode: %w", err)
	}
	if f.SkipPermissions {
		mode = permission.ModeBypass
	}
	if f.PromptTool != "" && f.PromptTool != "stdio" {
		return "", fmt.Errorf("--permission-prompt-tool %q: flower asks the host over stdio only: use --permission-prompt-tool stdio", f.PromptTool)
	}
	if f.Input != "text" && f.Input != "stream-json" {
		return "", fmt.Errorf("--input-format %q: use text or stream-json", f.Input)
	}
	return mode, nil
}
