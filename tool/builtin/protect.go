package builtin

import (
	"fmt"
	"path/filepath"
)

// protectedError refuses to write a path the sandbox mounts read-only for
// tool processes (sandbox.Protected: flower.yaml, .mcp.json, .claude/,
// .git/hooks...): the file tools must not do for the model what Bash
// cannot (issue 20).
type protectedError struct{ path string }

func (e *protectedError) Error() string {
	return fmt.Sprintf("path %q is protected configuration (it decides what flower enforces next time): only a person may change it", e.path)
}

// resolveWritable is resolve for a tool that writes p: it also refuses
// the protected paths and everything under them, through symlinks too.
func (e Env) resolveWritable(p string) (string, error) {
	real, err := e.resolve(p)
	if err != nil {
		return "", err
	}
	for _, q := range e.Protected {
		abs, err := filepath.Abs(q)
		if err != nil {
			continue
		}
		if r, err := realPath(filepath.Clean(abs)); err == nil {
			abs = r
		}
		if within(abs, real) {
			return "", &protectedError{path: p}
		}
	}
	return real, nil
}
