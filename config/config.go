// Package config reads flower.yaml, the per-workspace settings file at the
// workspace root. Today it holds the resume policies for ambiguous ops
// (SPEC R5.4):
//
//	resume:
//	  default: retry          # retry | skip | discard | prompt
//	  per_step:
//	    publish: discard
//	  per_tool:
//	    Bash: retry
//
// Parsing is strict: a misspelt key, a wrong type or an unknown policy is
// an error, because a silently ignored `per_tools:` would turn a careful
// `discard` into a duplicate publish. Every error is one line,
// file:line:col: field: problem (fix), so editors and terminals can jump
// to it.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"

	"github.com/flower-run/flower/resume"
)

// FileName is the settings file's name, at the workspace root.
const FileName = "flower.yaml"

// Config is the content of flower.yaml.
type Config struct {
	Resume Resume `yaml:"resume"`
	// Defaults of the CLI's flags (R10.2), typically in the user-level
	// config.yaml; nil leaves the built-in default (the model's name is
	// model.name). A flag given on the command line wins over both files.
	Timeout  *float64 `yaml:"timeout"`
	MaxTurns *int     `yaml:"max_turns"`
	MaxAsks  *int     `yaml:"max_asks"`
	Rounds   *int     `yaml:"rounds"`
	Budget   *float64 `yaml:"budget"`
	// Issue 10's keys: sandbox in sandbox.go (secrets in contain.go),
	// permissions in permissions.go, models and model in contain.go.
	Sandbox     Sandbox               `yaml:"sandbox"`
	Permissions Permissions           `yaml:"permissions"`
	Models      map[string]ModelPrice `yaml:"models"`
	Model       ModelSettings         `yaml:"model"`
	MCP         MCP                   `yaml:"mcp"` // config/mcp.go
	// Claude is what the Claude Code settings files say (config/claude.go):
	// Load reads them, and PermissionRules and SandboxConfig merge them in.
	Claude ClaudeSettings `yaml:"-"`
	// Subagents are Claude Code's .claude/agents/*.md (subagents.go).
	Subagents []Subagent `yaml:"-"`
	Env       Env        `yaml:"env"` // config/env.go
}

// Resume holds the policies for ambiguous ops, from the most specific
// (per step) to the least (the default); see PolicyFor.
type Resume struct {
	Default Policy            `yaml:"default"`
	PerStep map[string]Policy `yaml:"per_step"`
	PerTool map[string]Policy `yaml:"per_tool"`
}

// Defaults is the configuration of a workspace without flower.yaml.
func Defaults() Config {
	return Config{Resume: Resume{Default: Retry}}
}

// PolicyFor is the effective policy for an ambiguous call of tool inside
// step. A per_step entry wins over a per_tool entry, which wins over the
// default: a step policy such as `publish: discard` states the safety of
// the whole step's outside effect, and a generic `Bash: retry` must not
// undo it. The result is always Effective, so never Prompt or "".
func (c Config) PolicyFor(step, tool string) Policy {
	if p := c.Resume.PerStep[step]; p != "" {
		return p.Effective()
	}
	if p := c.Resume.PerTool[tool]; p != "" {
		return p.Effective()
	}
	return c.Resume.Default.Effective()
}

// Policies are the resume policies as the runtime takes them: plain
// values of package resume, so an embedder of the agent links no YAML
// parser. Their precedence is PolicyFor's.
func (c Config) Policies() resume.Policies {
	return resume.Policies{Default: resume.Policy(c.Resume.Default),
		PerStep: policies(c.Resume.PerStep), PerTool: policies(c.Resume.PerTool)}
}

func policies(m map[string]Policy) map[string]resume.Policy {
	if m == nil {
		return nil
	}
	out := make(map[string]resume.Policy, len(m))
	for k, p := range m {
		out[k] = resume.Policy(p)
	}
	return out
}

// Load reads the user-level config.yaml (see UserFile), then the
// workspace's flower.yaml over it: a key the workspace sets wins, a key
// it leaves out keeps the user's value (R10.2). Both files are optional;
// without either, Load gives Defaults and no error. Claude Code's settings
// files are read too, into Config.Claude (see LoadClaude).
func Load(workspace string) (Config, error) {
	cfg := Defaults()
	for _, name := range []string{UserFile(), filepath.Join(workspace, FileName)} {
		if name == "" {
			continue
		}
		data, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Config{}, fmt.Errorf("read config: %w", err)
		}
		if cfg, err = parseOver(cfg, name, data); err != nil {
			return Config{}, err
		}
	}
	claude, err := LoadClaude(workspace)
	if err != nil {
		return Config{}, err
	}
	cfg.Claude = claude
	if cfg.Subagents, err = LoadSubagents(workspace); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Parse decodes the bytes of a flower.yaml; name is the file name shown
// in errors. Empty or comment-only input gives Defaults. Errors are
// *Error values.
//
// go-yaml parses and decodes (strictly: unknown keys are errors); before
// decoding, checkShape refuses what the decoder would accept silently or
// could not point at.
func Parse(name string, data []byte) (Config, error) {
	return parseOver(Defaults(), name, data)
}

// parseOver decodes data over base: the keys data sets replace base's,
// the rest stay. This is the whole merge of the user's and the
// workspace's files, so a key added to Config merges with no more code.
func parseOver(base Config, name string, data []byte) (Config, error) {
	if err := checkBrackets(data); err != nil {
		return Config{}, describe(name, nil, err)
	}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return Config{}, describe(name, nil, err)
	}
	body, err := onlyBody(file)
	if err == nil {
		err = checkShape(body)
	}
	cfg := base
	if err == nil && body != nil {
		err = yaml.NodeToValue(body, &cfg, yaml.Strict())
	}
	if err != nil {
		return Config{}, describe(name, body, err)
	}
	if err := cfg.checkContain(name); err != nil {
		return Config{}, err
	}
	if err := cfg.checkEnv(name); err != nil {
		return Config{}, err
	}
	return cfg, nil
}
