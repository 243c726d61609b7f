package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goccy/go-yaml"
)

// markdownDef is one Markdown file with YAML front matter, as Claude
// Code's subagents and slash commands are written:
//
//	---
//	name: reviewer
//	description: Reviews a diff
//	---
//	The body.
type markdownDef struct {
	Path, Name string
	Front      map[string]any
	Body       string
}

// readDefs reads dir/*.md, sorted by name; a missing dir is none. A file
// whose front matter is not YAML is an *Error naming it.
func readDefs(dir string) ([]markdownDef, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []markdownDef
	for _, name := range names {
		data, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		d, err := parseDef(name, data)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func parseDef(name string, data []byte) (markdownDef, error) {
	d := markdownDef{Path: name, Name: strings.TrimSuffix(filepath.Base(name), ".md")}
	text := string(bytes.TrimPrefix(data, []byte("\ufeff")))
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		rest, ok = strings.CutPrefix(text, "---\r\n")
	}
	if !ok {
		d.Body = strings.TrimSpace(text)
		return d, nil
	}
	front, body, found := strings.Cut(rest, "\n---")
	if !found {
		return d, &Error{File: name, Line: 1, Column: 1, Msg: `front matter opened with "---" is never closed (end it with a line "---")`}
	}
	if err := yaml.Unmarshal([]byte(front), &d.Front); err != nil {
		return d, &Error{File: name, Line: 2, Column: 1, Msg: "front matter: " + firstLineOf(err.Error()) + " (write key: value lines)"}
	}
	_, body, _ = strings.Cut(body, "\n")
	d.Body = strings.TrimSpace(body)
	return d, nil
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// str is a front-matter string field ("" when absent or not a string).
func (d markdownDef) str(key string) string {
	s, _ := d.Front[key].(string)
	return strings.TrimSpace(s)
}

// list is a front-matter list field, written as "A, B" or as a YAML
// list; nil when absent.
func (d markdownDef) list(key string) []string {
	switch v := d.Front[key].(type) {
	case string:
		var out []string
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	case []any:
		var out []string
		for _, p := range v {
			if s, ok := p.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
		return out
	}
	return nil
}

// defDirs are a kind's directories, the user's (~/.claude/KIND) first, so
// that the project's definition of a name wins.
func defDirs(workspace, kind string) []string {
	var out []string
	project := filepath.Join(workspace, ClaudeDir, kind)
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if user := filepath.Join(home, ClaudeDir, kind); user != project {
			out = append(out, user)
		}
	}
	return append(out, project)
}
