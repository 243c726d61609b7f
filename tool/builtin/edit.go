package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/flower-run/flower/tool"
)

// Edit replaces an exact string in a file, atomically.
type Edit struct{ Env Env }

var _ tool.Tool = (*Edit)(nil)

func (*Edit) Name() string      { return "Edit" }
func (*Edit) Class() tool.Class { return tool.Effect }
func (*Edit) Description() string {
	return `Replaces exact text in an existing file.

- old_string must match the file exactly, including whitespace and indentation. When you copy it from Read output, leave out the line-number prefix (everything up to and including the tab).
- old_string must occur exactly once in the file, so the edit cannot land in the wrong place. If it occurs more often, include more surrounding lines to make it unique, or set replace_all to replace every occurrence (handy for renaming a variable).
- new_string must differ from old_string; it may be empty to delete text.
- The file is replaced atomically and keeps its permissions. To create a new file, use Write.
- Read the file before editing it; the result shows the edited lines so you can check them.`
}

func (*Edit) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The file to edit, absolute or relative to the workspace."},
    "old_string": {"type": "string", "description": "The exact text to replace. It must occur exactly once unless replace_all is true."},
    "new_string": {"type": "string", "description": "The text to put in its place; must differ from old_string."},
    "replace_all": {"type": "boolean", "default": false, "description": "Replace every occurrence of old_string instead of requiring exactly one."}
  },
  "required": ["file_path", "old_string", "new_string"]
}`)
}

type editInput struct {
	FilePath   string   `json:"file_path"`
	OldString  string   `json:"old_string"`
	NewString  string   `json:"new_string"`
	ReplaceAll flexBool `json:"replace_all"`
}

func (t *Edit) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	env := t.Env.withDefaults()
	var in editInput
	if err := decodeInput(input, &in, "file_path", "old_string", "new_string"); err != nil {
		return tool.Errorf("Edit: %v", err), nil
	}
	if err := in.check(); err != nil {
		return tool.Errorf("Edit: %v", err), nil
	}
	path, err := env.resolveWritable(in.FilePath)
	if err != nil {
		return tool.Errorf("Edit: %v", err), nil
	}
	return in.apply(path, env.display(path))
}

func (in editInput) check() error {
	switch {
	case in.OldString == "":
		return errors.New("old_string is empty; to create a file use Write")
	case in.OldString == in.NewString:
		return errors.New("old_string and new_string are identical; there is nothing to change")
	}
	return nil
}

// apply reads the file, replaces, and writes it back atomically.
func (in editInput) apply(path, name string) (tool.Result, error) {
	mode, existed, err := existingMode(path)
	if err != nil {
		return tool.Errorf("Edit: %s: %v", name, err), nil
	}
	if !existed {
		return tool.Errorf("Edit: file does not exist: %s; to create it use Write", name), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return tool.Errorf("Edit: %v", err), nil
	}
	content := string(data)
	n := strings.Count(content, in.OldString)
	switch {
	case n == 0:
		return tool.Errorf("Edit: old_string was not found in %s. It must match exactly, including whitespace and indentation; Read the file again and copy the text.", name), nil
	case n > 1 && !bool(in.ReplaceAll):
		return tool.Errorf("Edit: old_string occurs %d times in %s; include more surrounding lines to make it unique, or set replace_all to true.", n, name), nil
	}
	at := strings.Index(content, in.OldString)
	if in.ReplaceAll {
		content = strings.ReplaceAll(content, in.OldString, in.NewString)
	} else {
		content = strings.Replace(content, in.OldString, in.NewString, 1)
	}
	if err := writeAtomic(path, []byte(content), mode); err != nil {
		return tool.Errorf("Edit: %s: %v", name, err), nil
	}
	msg := fmt.Sprintf("Edited %s: replaced %d occurrence%s. ", name, n, plural(n))
	return tool.Result{Content: msg + snippet(content, at, at+len(in.NewString))}, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

const (
	snippetContext  = 3  // lines shown around an edit
	snippetMaxLines = 40 // so a huge new_string does not flood the result
)

// snippet shows the lines holding content[from:to] plus a little context,
// numbered like Read, so the model can check its edit without a re-read.
func snippet(content string, from, to int) string {
	first := strings.Count(content[:from], "\n") + 1
	last := first + strings.Count(content[from:to], "\n")
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	lo := max(first-snippetContext, 1)
	hi := min(last+snippetContext, len(lines), lo+snippetMaxLines-1)
	var b strings.Builder
	b.WriteString("The first edited region now reads:\n")
	for n := lo; n <= hi; n++ {
		writeNumbered(&b, n, cutLine([]byte(lines[n-1]), MaxLineChars, false))
	}
	return b.String()
}
