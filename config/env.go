package config

import (
	"fmt"
	"path"
	"regexp"

	"github.com/flower-run/flower/tool"
)

// Env is flower.yaml's env (issue 20 item 4): what the tools' processes
// (Bash, its background shells, stdio MCP servers) get of flower's
// environment besides tool.BaseEnv, and variables set for them:
//
//	env:
//	  allow: [GOFLAGS, "NODE_*"]    # names or globs, passed when set
//	  set: {NODE_ENV: test}
//
// A credential or flower's own setting is never passed (tool.Withheld):
// naming one is an error, a glob skips it.
type Env struct {
	Allow []string          `yaml:"allow"`
	Set   map[string]string `yaml:"set"`
}

// Policy is e as the tools apply it.
func (e Env) Policy() tool.EnvPolicy { return tool.EnvPolicy{Allow: e.Allow, Set: e.Set} }

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

const withheldHelp = "is never passed to tools (names with KEY, SECRET, TOKEN, PASSWORD..., FLOWER_*, ANTHROPIC_*, OPENAI_*, PG*, or a URL with a password)"

func (c Config) checkEnv(name string) error {
	bad := func(field, msg string, args ...any) error {
		return &Error{File: name, Field: field, Msg: fmt.Sprintf(msg, args...)}
	}
	for i, g := range c.Env.Allow {
		field := fmt.Sprintf("env.allow[%d]", i)
		if _, err := path.Match(g, ""); err != nil || g == "" {
			return bad(field, "%q is not a variable name or glob (write e.g. GOFLAGS or NODE_*)", g)
		}
		if envName.MatchString(g) && tool.Withheld(g, "") {
			return bad(field, "%s %s", g, withheldHelp)
		}
	}
	for k, v := range c.Env.Set {
		if !envName.MatchString(k) {
			return bad("env.set."+k, "%q is not a variable name (letters, digits and _)", k)
		}
		if tool.Withheld(k, v) {
			return bad("env.set."+k, "%s %s", k, withheldHelp)
		}
	}
	return nil
}
