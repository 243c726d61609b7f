package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flower-run/flower/hook"
	"github.com/flower-run/flower/permission"
)

// Claude Code's settings files (issue 21), read with flower.yaml: the
// user's ~/.claude/settings.json, the project's .claude/settings.json and
// the person's own .claude/settings.local.json, in that order.
const (
	ClaudeDir          = ".claude"
	ClaudeSettingsFile = "settings.json"
	ClaudeLocalFile    = "settings.local.json"
)

// ClaudeSettings is what Claude Code's settings files say that flower
// obeys, merged with Claude Code's precedence: the rule lists, the
// additional directories and the hooks of every file add up (and a deny
// rule wins over ask and allow wherever it comes from, since the rules
// are tried deny first); for a scalar or an env variable the local file
// wins over the project's, which wins over the user's.
type ClaudeSettings struct {
	// Files are the files read, in the order above.
	Files []string
	// Allow, Ask and Deny are the permission rules, in Claude Code's
	// syntax (package permission); Origin names the file of each.
	Allow, Ask, Deny []string
	Origin           map[string]string
	// AdditionalDirectories are more directories the agent may write,
	// absolute (relative ones are relative to the workspace).
	AdditionalDirectories []string
	// DefaultMode is permissions.defaultMode: default, acceptEdits, plan,
	// bypassPermissions or dontAsk; "" when no file sets it.
	DefaultMode string
	// Env is set in the environment of the run and its tools.
	Env map[string]string
	// Hooks run at the events of package hook.
	Hooks hook.Config
}

// claudeFile is one settings file as flower reads it; keys of Claude
// Code's that flower has no use for (model, statusLine...) are ignored.
type claudeFile struct {
	Permissions json.RawMessage   `json:"permissions"`
	Env         map[string]string `json:"env"`
	Hooks       hook.Config       `json:"hooks"`
}

type claudePermissions struct {
	Allow                        []string `json:"allow"`
	Ask                          []string `json:"ask"`
	Deny                         []string `json:"deny"`
	AdditionalDirectories        []string `json:"additionalDirectories"`
	DefaultMode                  string   `json:"defaultMode"`
	DisableBypassPermissionsMode string   `json:"disableBypassPermissionsMode"`
}

var permissionModes = []string{"default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"}

// ClaudeFiles are the settings files that apply to workspace, in the
// order they are merged (user, project, local); the user's is left out
// when the home directory is unknown or is the workspace.
func ClaudeFiles(workspace string) []string {
	var out []string
	project := filepath.Join(workspace, ClaudeDir, ClaudeSettingsFile)
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if user := filepath.Join(home, ClaudeDir, ClaudeSettingsFile); user != project { // a workspace at ~
			out = append(out, user)
		}
	}
	return append(out, project, filepath.Join(workspace, ClaudeDir, ClaudeLocalFile))
}

// LoadClaude reads the settings files of workspace that exist. A bad file
// is an *Error: file:line:col: field: problem (fix).
func LoadClaude(workspace string) (ClaudeSettings, error) {
	var s ClaudeSettings
	for _, name := range ClaudeFiles(workspace) {
		data, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return ClaudeSettings{}, fmt.Errorf("read %s: %w", name, err)
		}
		if err := s.add(workspace, name, data); err != nil {
			return ClaudeSettings{}, err
		}
	}
	return s, nil
}

// add reads one settings file's bytes over s; name is shown in errors.
func (s *ClaudeSettings) add(workspace, name string, data []byte) error {
	s.Files = append(s.Files, name)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	var f claudeFile
	if err := json.Unmarshal(data, &f); err != nil {
		return jsonError(name, data, err, "")
	}
	var p claudePermissions
	if len(f.Permissions) > 0 && string(f.Permissions) != "null" {
		dec := json.NewDecoder(bytes.NewReader(f.Permissions))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return jsonError(name, data, err, "permissions")
		}
	}
	if p.DefaultMode != "" && !slices.Contains(permissionModes, p.DefaultMode) {
		return at(name, data, "permissions.defaultMode", p.DefaultMode,
			fmt.Sprintf("unknown mode %q (use %s)", p.DefaultMode, strings.Join(permissionModes, ", ")))
	}
	for _, l := range []struct {
		key   string
		rules []string
		into  *[]string
	}{{"allow", p.Allow, &s.Allow}, {"ask", p.Ask, &s.Ask}, {"deny", p.Deny, &s.Deny}} {
		for i, r := range l.rules {
			if _, err := permission.Parse(r); err != nil {
				return at(name, data, fmt.Sprintf("permissions.%s[%d]", l.key, i), r, "rule "+quote(r)+": "+err.Error())
			}
			*l.into = append(*l.into, r)
			if s.Origin == nil {
				s.Origin = map[string]string{}
			}
			if _, ok := s.Origin[r]; !ok {
				s.Origin[r] = name
			}
		}
	}
	for _, d := range p.AdditionalDirectories {
		s.AdditionalDirectories = append(s.AdditionalDirectories, absDir(workspace, d))
	}
	if p.DefaultMode != "" {
		s.DefaultMode = p.DefaultMode
	}
	for k, v := range f.Env {
		if s.Env == nil {
			s.Env = map[string]string{}
		}
		s.Env[k] = v
	}
	if err := f.Hooks.Check(); err != nil {
		var ce *hook.CheckError
		if errors.As(err, &ce) {
			return at(name, data, ce.Path, ce.Key, ce.Msg)
		}
		return &Error{File: name, Msg: err.Error()}
	}
	s.Hooks = s.Hooks.Merge(f.Hooks)
	return nil
}

// absDir makes a directory of settings absolute: ~ is home, a relative
// one is under the workspace.
func absDir(workspace, d string) string {
	home, _ := os.UserHomeDir()
	switch {
	case d == "~" || strings.HasPrefix(d, "~/"):
		d = filepath.Join(home, strings.TrimPrefix(d, "~"))
	case !filepath.IsAbs(d):
		d = filepath.Join(workspace, d)
	}
	return filepath.Clean(d)
}

// jsonError turns a decoding error into a one-line *Error with the line
// and column of the offset the decoder reports; field prefixes the
// decoder's own field path (a sub-document's).
func jsonError(name string, data []byte, err error, field string) *Error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		out := &Error{File: name, Msg: syn.Error() + " (fix the JSON: a missing comma, quote or bracket?)", Err: err}
		out.Line, out.Column = lineCol(data, int(syn.Offset))
		return out
	case errors.As(err, &typ):
		path := strings.Trim(field+"."+typ.Field, ".")
		msg := fmt.Sprintf("got a JSON %s, want %s", typ.Value, jsonType(typ.Type.String()))
		return at(name, data, path, lastKey(path), msg)
	}
	if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		key = strings.Trim(key, `"`)
		return at(name, data, field+"."+key, key, fmt.Sprintf("unknown key %q (use allow, ask, deny, additionalDirectories or defaultMode)", key))
	}
	return &Error{File: name, Field: field, Msg: err.Error(), Err: err}
}

// jsonType names a Go type the way a settings file's author knows it.
func jsonType(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "struct"), strings.Contains(t, "."):
		return "an object"
	case t == "string":
		return "a string"
	case t == "float64", strings.HasPrefix(t, "int"):
		return "a number"
	}
	return t
}

func lastKey(path string) string {
	if i := strings.LastIndexAny(path, ".["); i >= 0 {
		return strings.TrimSuffix(path[i+1:], "]")
	}
	return path
}

// at is an *Error at the first place in data where text appears as a
// JSON string (the key or value at fault), else without a position.
func at(name string, data []byte, field, text, msg string) *Error {
	out := &Error{File: name, Field: field, Msg: msg}
	quoted, _ := json.Marshal(text)
	if i := bytes.Index(data, quoted); i >= 0 && text != "" {
		out.Line, out.Column = lineCol(data, i)
	}
	return out
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int) (int, int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := off - bytes.LastIndexByte(before, '\n')
	return line, col
}
