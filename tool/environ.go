package tool

import (
	"net/url"
	"path"
	"slices"
	"strings"
)

// The environment of tool processes (issue 20 item 4), by allow list as
// Codex's shell_environment_policy: Bash, its background shells and stdio
// MCP servers get BaseEnv and what flower.yaml's env names, never a
// variable Withheld says is a credential or flower's own setting. A
// person's exported DATABASE_URL or GITHUB_TOKEN, and FLOWER_STORE with
// its password, thus never reach the agent.

// BaseEnv are the variables every tool process gets from flower's
// environment when set: what it takes to find programs, write temp files
// and print text. LC_* are passed too.
var BaseEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "COLORTERM", "NO_COLOR", "TMPDIR", "TZ"}

// withheldWords are the parts of a name that mark a credential.
var withheldWords = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE", "SESSION"}

// withheldPrefixes are flower's own settings and the model providers'.
var withheldPrefixes = []string{"FLOWER_", "ANTHROPIC_", "OPENAI_", "CLAUDE_", "PG"}

// Withheld reports whether a variable never reaches a tool process,
// whatever flower.yaml says: its name holds KEY, SECRET, TOKEN,
// PASSWORD... or starts with FLOWER_, ANTHROPIC_, OPENAI_ (the store's and
// the provider's settings) or PG (libpq's, PGPASSWORD above all), or its
// value is a URL with a password in it (DATABASE_URL=postgres://u:p@h).
func Withheld(name, value string) bool {
	n := strings.ToUpper(name)
	for _, w := range withheldWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, p := range withheldPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return credentialURL(value)
}

// credentialURL reports whether v is a URL carrying a password.
func credentialURL(v string) bool {
	if !strings.Contains(v, "://") || !strings.Contains(v, "@") {
		return false
	}
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil {
		return true // unparsable with :// and @: assume it carries one
	}
	_, has := u.User.Password()
	return has
}

// EnvPolicy is flower.yaml's env: the names (globs: GO*, NODE_*) to pass
// besides BaseEnv, and variables to set.
type EnvPolicy struct {
	Allow []string
	Set   map[string]string
}

// Environ is the environment a tool process gets from environ (KEY=value
// lines, as os.Environ): the allowed variables of environ, then Set, in
// a stable order. Withheld variables are dropped from both.
func (p EnvPolicy) Environ(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if _, set := p.Set[name]; set || !p.allows(name) || Withheld(name, value) {
			continue
		}
		out = append(out, kv)
	}
	names := make([]string, 0, len(p.Set))
	for name := range p.Set {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !Withheld(name, p.Set[name]) {
			out = append(out, name+"="+p.Set[name])
		}
	}
	return out
}

func (p EnvPolicy) allows(name string) bool {
	if slices.Contains(BaseEnv, name) || strings.HasPrefix(name, "LC_") {
		return true
	}
	for _, g := range p.Allow {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// HeldSecrets are the names and values in environ that Withheld keeps
// from tools because they are credentials (not merely flower's settings,
// such as FLOWER_MODEL, whose value is a model's name and shows in
// ordinary text): flower scrubs these values from everything it writes
// and sends, in case one reaches a tool by another way.
func HeldSecrets(environ []string) (names, values []string) {
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if value == "" || !credential(name, value) {
			continue
		}
		names, values = append(names, name), append(values, value)
		if u, err := url.Parse(value); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok {
				values = append(values, pw)
			}
		}
	}
	return names, values
}

func credential(name, value string) bool {
	n := strings.ToUpper(name)
	for _, w := range withheldWords[:6] { // KEY ... CREDENTIAL: not AUTH, COOKIE, SESSION, which often hold ids
		if strings.Contains(n, w) {
			return true
		}
	}
	return n == "FLOWER_STORE" || n == "PGPASSWORD" || credentialURL(value)
}
