// Package permission decides whether a tool call may run, by rules in
// Claude Code's syntax (SPEC R9.3), as flower.yaml lists them:
//
//	permissions:
//	  allow: ["Bash(go test:*)"]
//	  ask:   ["Bash(git push:*)", "Write(.github/**)"]
//	  deny:  ["Bash(rm -rf /*)", "WebFetch(domain:*)", "mcp__github__*"]
//
// A rule is a tool name, or a tool name with a pattern in parentheses:
//
//   - Bash(npm run build) is that exact command; Bash(git push:*) is "git
//     push" and every command that starts with "git push "; * matches any
//     text (Bash(git * main)), and a trailing " *" also matches nothing
//     (Bash(ls *) matches ls). A command is matched part by part: "cd x &&
//     git push" is two commands, and so are pipelines, subshells, $(...)
//     and the string of bash -c or eval; leading VAR=value assignments and
//     the wrappers timeout, nice, nohup, time, env, command, exec and sudo
//     are skipped. One denied part denies the call. A line whose commands
//     cannot be read off its text (arithmetic on variables, ${x@P},
//     ${!x}, eval, source, trap, a shell reading a here-document or a
//     pipe, $(...), a command name that is a variable) is never covered
//     by allow rules: when any rule names Bash it is asked (dynamic.go).
//     The files a line names literally (arguments, < and > redirections)
//     meet the Read and Edit/Write rules: cat .env meets Read(.env).
//   - Read(path), Edit(path) and Write(path) take gitignore-style globs:
//     "/x" and "x/y" are relative to the workspace, "//x" is absolute,
//     "~/x" is in the home directory, and a pattern without a slash
//     (".env", "*.pem") matches that name in any directory. Edit and Write
//     rules both apply to the Edit and Write tools; Read rules apply to
//     Read, Glob and Grep (whose search root is their path), and Grep and
//     Glob leave out of their results every file a Read of which would
//     not run without asking (Rules.Hides). A path given to a tool as ~/x
//     or $HOME/x is read as in the home directory.
//   - WebFetch(domain:example.com) matches that host and its subdomains;
//     the domain may hold * (domain:*).
//   - A name alone matches every call of that tool; mcp__server matches
//     every tool of that MCP server, and * in a name matches any text
//     (mcp__github__*).
//
// Rules are tried deny first, then ask, then allow, as Claude Code does:
// the first match decides, whatever the specificity. Allow rules list what
// runs without asking: a call of a tool that has allow rules, which none
// of them covers, is asked (a Bash line is covered when each of its
// commands is). A call of a tool no rule names is allowed (flower runs
// unattended by design; the sandbox, not the rules, is what confines
// Bash). Rules on Bash are a guard against
// mistakes, not a security boundary: a command can always be spelt in a
// way no pattern foresees (variables, scripts, aliases).
package permission

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// Action is what a rule decides.
type Action int

const (
	Allow Action = iota
	Ask
	Deny
)

func (a Action) String() string {
	switch a {
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return "allow"
}

// kind is what a rule's pattern is matched against.
type kind int

const (
	whole    kind = iota // no pattern: the whole call
	command              // Bash commands
	pathKind             // file paths
	domain               // WebFetch hosts
)

// Rule is one parsed rule.
type Rule struct {
	Text string // as written
	name *regexp.Regexp
	kind kind
	cmd  *regexp.Regexp // command
	glob string         // path: a doublestar pattern, "~/" and "/" not yet resolved
	host *regexp.Regexp // domain
}

// builtins are the tool names a mistyped case most likely meant.
var builtins = []string{"Bash", "Read", "Write", "Edit", "Glob", "Grep", "WebFetch", "Task", "BashOutput", "KillShell"}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_*.-]+$`)

// Parse parses one rule. Errors are one line that says what to write.
func Parse(text string) (Rule, error) {
	s := strings.TrimSpace(text)
	r := Rule{Text: s}
	if s == "" {
		return r, fmt.Errorf("empty rule (write a tool name, such as Bash, or Tool(pattern))")
	}
	name, spec, hasSpec := strings.Cut(s, "(")
	if hasSpec {
		if !strings.HasSuffix(spec, ")") {
			return r, fmt.Errorf(`missing ")" at the end (write Tool(pattern))`)
		}
		spec = strings.TrimSuffix(spec, ")")
	} else if strings.Contains(s, ")") {
		return r, fmt.Errorf(`")" without "(" (write Tool(pattern))`)
	}
	if !nameRE.MatchString(name) {
		return r, fmt.Errorf("%q is not a tool name (letters, digits, _ - . and *)", name)
	}
	for _, b := range builtins {
		if name != b && strings.EqualFold(name, b) {
			return r, fmt.Errorf("unknown tool %q: tool names are case-sensitive (did you mean %s?)", name, b)
		}
	}
	r.name = nameRegexp(name)
	if !hasSpec || spec == "*" {
		return r, nil
	}
	if strings.TrimSpace(spec) == "" {
		return r, fmt.Errorf("empty pattern in () (write %s alone to match every call)", name)
	}
	return r, r.parseSpec(name, spec)
}

// nameRegexp matches tool names: * is any text, and mcp__server also
// matches the tools of that server.
func nameRegexp(name string) *regexp.Regexp {
	re := wildcard(name)
	if strings.HasPrefix(name, "mcp__") && strings.Count(name, "__") == 1 && !strings.Contains(name, "*") {
		re += "(__.*)?"
	}
	return regexp.MustCompile("^" + re + "$")
}

func (r *Rule) parseSpec(name, spec string) error {
	switch name {
	case "Bash":
		re, err := commandRegexp(spec)
		r.kind, r.cmd = command, re
		return err
	case "Read", "Edit", "Write":
		r.kind, r.glob = pathKind, spec
		return checkGlob(spec)
	case "WebFetch":
		d, ok := strings.CutPrefix(spec, "domain:")
		if !ok || d == "" {
			return fmt.Errorf("WebFetch takes domain:HOST (write WebFetch(domain:example.com))")
		}
		if _, err := url.Parse("https://" + strings.ReplaceAll(d, "*", "x")); err != nil || strings.ContainsAny(d, "/ ") {
			return fmt.Errorf("%q is not a domain (write WebFetch(domain:example.com))", d)
		}
		r.kind = domain
		r.host = regexp.MustCompile("^(.*\\.)?" + wildcard(strings.ToLower(d)) + "$")
		return nil
	}
	return fmt.Errorf("%s takes no (pattern): only Bash, Read, Edit, Write and WebFetch do (write %s alone)", name, name)
}

// commandRegexp compiles a Bash pattern: "prefix:*" (at the end only),
// or text with * wildcards.
func commandRegexp(spec string) (*regexp.Regexp, error) {
	spec = strings.Join(strings.Fields(spec), " ") // commands are matched with single spaces
	if i := strings.Index(spec, ":*"); i >= 0 {
		if i != len(spec)-2 {
			return nil, fmt.Errorf(`":*" may only end the pattern (write Bash(git push:*))`)
		}
		prefix := strings.TrimSpace(spec[:i])
		if prefix == "" {
			return nil, fmt.Errorf(`nothing before ":*" (write Bash alone to match every command)`)
		}
		return regexp.MustCompile("^" + wildcard(prefix) + "( .*)?$"), nil
	}
	if p, ok := strings.CutSuffix(spec, " *"); ok && !strings.Contains(p, "*") {
		return regexp.MustCompile("^" + wildcard(p) + "( .*)?$"), nil
	}
	return regexp.MustCompile("^" + wildcard(spec) + "$"), nil
}

// wildcard turns text with * into a regexp body.
func wildcard(s string) string {
	parts := strings.Split(s, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, ".*")
}
