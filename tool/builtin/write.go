package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/flower-run/flower/tool"
)

// Write creates or replaces a file, atomically.
type Write struct{ Env Env }

var _ tool.Tool = (*Write)(nil)

func (*Write) Name() string      { return "Write" }
func (*Write) Class() tool.Class { return tool.Effect }
func (*Write) Description() string {
	return `Writes a file to the local filesystem, creating it or replacing it entirely.

- file_path may be absolute or relative to the workspace; paths outside the workspace are refused unless flower is configured to allow them. Missing parent directories are created.
- The write is atomic: the file holds either its old content or the new content, never a mix. An existing file keeps its permissions.
- content replaces the whole file. To change part of an existing file, use Edit instead: it is cheaper and cannot drop text by accident. Read a file before you overwrite it.
- Do not create files nobody asked for, such as README or notes files.`
}

func (*Write) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The file to write, absolute or relative to the workspace."},
    "content": {"type": "string", "description": "The complete new content of the file."}
  },
  "required": ["file_path", "content"]
}`)
}

type writeInput struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

func (t *Write) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	env := t.Env.withDefaults()
	var in writeInput
	if err := decodeInput(input, &in, "file_path", "content"); err != nil {
		return tool.Errorf("Write: %v", err), nil
	}
	path, err := env.resolveWritable(in.FilePath)
	if err != nil {
		return tool.Errorf("Write: %v", err), nil
	}
	name := env.display(path)
	mode, existed, err := existingMode(path)
	if err != nil {
		return tool.Errorf("Write: %s: %v", name, err), nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return tool.Errorf("Write: create parent directories of %s: %v", name, err), nil
	}
	if err := writeAtomic(path, []byte(in.Content), mode); err != nil {
		return tool.Errorf("Write: %s: %v", name, err), nil
	}
	verb := "Created"
	if existed {
		verb = "Overwrote"
	}
	return tool.Result{Content: fmt.Sprintf("%s %s (%d bytes written)", verb, name, len(in.Content))}, nil
}
