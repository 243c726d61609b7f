package permission

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Rules are the allow, ask and deny lists of one configuration, bound to
// a workspace (relative path patterns are relative to it). The zero value
// and nil allow everything.
type Rules struct {
	workspace, home  string
	allow, ask, deny []Rule
}

// New parses the three lists. An error names the list, the index and the
// rule: permissions.deny[2] "Bash(": missing ")" ...
func New(workspace string, allow, ask, deny []string) (*Rules, error) {
	r := &Rules{workspace: workspace}
	r.home, _ = os.UserHomeDir()
	for _, l := range []struct {
		name  string
		texts []string
		into  *[]Rule
	}{{"allow", allow, &r.allow}, {"ask", ask, &r.ask}, {"deny", deny, &r.deny}} {
		for i, t := range l.texts {
			rule, err := Parse(t)
			if err != nil {
				return nil, fmt.Errorf("permissions.%s[%d] %q: %w", l.name, i, t, err)
			}
			if rule.kind == pathKind {
				rule.glob = absGlob(rule.glob, workspace, r.home)
			}
			*l.into = append(*l.into, rule)
		}
	}
	return r, nil
}

// Empty reports whether there is no rule at all.
func (r *Rules) Empty() bool {
	return r == nil || len(r.allow)+len(r.ask)+len(r.deny) == 0
}

// Decision is the outcome of Check.
type Decision struct {
	Action Action
	// Rule is the rule that decided, as written; "" when no rule matched.
	Rule string
	// Asks are every ask rule the call matched, when Action is Ask: an
	// "allow for this run" answer grants them all.
	Asks []string
	// Unlisted is true when the call is asked because its tool has allow
	// rules and none covers the call (Rule is ""); then Asks holds a key
	// of this exact call, so "allow for this run" allows it again, not
	// the whole tool.
	Unlisted bool
	// Why says, for a Bash line asked because its commands cannot be
	// determined from its text, what hides them (Unlisted is true).
	Why string
	// Mode is set when a permission mode (Gate), not a rule, decided.
	Mode Mode
	// Hook: a host's hook must see the call first (Gate.SetHooked); the
	// call is asked, and Then is what the mode and rules decided, for
	// when the hook leaves the decision open.
	Hook bool
	Then Action
}

// Check decides a call of tool with input (the model's JSON): the first
// of deny, ask, allow with a matching rule; else Ask when allow rules name
// the tool (they list what runs without asking, as in Claude Code), else
// Allow.
func (r *Rules) Check(tool string, input json.RawMessage) Decision {
	if r.Empty() {
		return Decision{Action: Allow}
	}
	return r.decide(r.call(tool, input), input)
}

func (r *Rules) decide(c call, input json.RawMessage) Decision {
	for _, rule := range r.deny {
		if c.matches(rule) {
			return Decision{Action: Deny, Rule: rule.Text}
		}
	}
	var asks []string
	for _, rule := range r.ask {
		if c.matches(rule) {
			asks = append(asks, rule.Text)
		}
	}
	if len(asks) > 0 {
		return Decision{Action: Ask, Rule: asks[0], Asks: asks}
	}
	key := []string{"call " + c.tool + " " + string(input)}
	if c.dynamic != "" && r.namesBash() {
		return Decision{Action: Ask, Unlisted: true, Asks: key, Why: c.dynamic}
	}
	if rule, ok := r.allowedBy(c); ok {
		return Decision{Action: Allow, Rule: rule}
	}
	for _, rule := range r.allow {
		if applies(rule, c.tool) {
			return Decision{Action: Ask, Unlisted: true, Asks: key}
		}
	}
	return Decision{Action: Allow}
}

// namesBash reports whether a rule of any list names Bash: then a line
// whose commands cannot be seen is asked, since no rule can be checked
// against it.
func (r *Rules) namesBash() bool {
	for _, l := range [][]Rule{r.allow, r.ask, r.deny} {
		for _, rule := range l {
			if rule.name.MatchString("Bash") {
				return true
			}
		}
	}
	return false
}

// Hides reports whether Grep and Glob must leave the file at path out of
// their results: a Read of it would not run without asking (issue 20
// item 5), so neither its name nor its content may reach the model
// through a search of the directory above it.
func (r *Rules) Hides(path string) bool {
	if r.Empty() || !r.rulesRead() {
		return false
	}
	return r.decide(call{tool: "Read", paths: r.resolve(path)}, nil).Action != Allow
}

func (r *Rules) rulesRead() bool {
	for _, l := range [][]Rule{r.allow, r.ask, r.deny} {
		for _, rule := range l {
			if applies(rule, "Read") {
				return true
			}
		}
	}
	return false
}

// allowedBy returns the allow rule that covers c. A Bash command line is
// covered only when each of its commands is ("go test && rm -rf x" is not
// covered by Bash(go test:*)), as Claude Code checks each subcommand.
func (r *Rules) allowedBy(c call) (string, bool) {
	if len(c.commands) <= 1 {
		for _, rule := range r.allow {
			if c.matches(rule) && !(c.tool == "Bash" && rule.kind == pathKind) {
				return rule.Text, true
			}
		}
		return "", false
	}
	first := ""
	for _, cmd := range c.commands {
		one := c
		one.commands = []string{cmd}
		rule, ok := r.allowedBy(one)
		if !ok {
			return "", false
		}
		if first == "" {
			first = rule
		}
	}
	return first, true
}

// call is what the rules see of one call: its tool, and what its input
// gives to each kind of pattern.
type call struct {
	tool     string
	commands []string // Bash
	dynamic  string   // Bash: why its commands cannot be seen, if so
	reads    []string // Bash: the files it names as reads, resolved
	writes   []string // Bash: the files it names as writes, resolved
	paths    []string // file tools: the path, and where its symlinks lead
	host     string   // WebFetch
}

func (r *Rules) call(tool string, input json.RawMessage) call {
	c := call{tool: tool}
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		Path     string `json:"path"`
		URL      string `json:"url"`
	}
	_ = json.Unmarshal(input, &in) // a bad input fails in the tool; here it matches what it can
	switch tool {
	case "Bash":
		c.commands = commands(in.Command)
		c.dynamic = dynamic(in.Command)
		reads, writes := shellPaths(in.Command, 0)
		for _, p := range reads {
			c.reads = append(c.reads, r.resolve(p)...)
		}
		for _, p := range writes {
			c.writes = append(c.writes, r.resolve(p)...)
		}
	case "Read", "Write", "Edit":
		c.paths = r.resolve(in.FilePath)
	case "Glob", "Grep":
		c.paths = r.resolve(in.Path)
	case "WebFetch":
		if u, err := url.Parse(strings.TrimSpace(in.URL)); err == nil {
			c.host = strings.ToLower(u.Hostname())
		}
	}
	return c
}

// resolve makes p absolute (relative to the workspace; empty is the
// workspace) and adds where its symlinks lead, so that a link cannot
// dodge a rule.
func (r *Rules) resolve(p string) []string {
	if p == "" {
		p = r.workspace
	}
	p = expandHome(p, r.home)
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.workspace, p)
	}
	p = filepath.Clean(p)
	out := []string{p}
	dir, base := p, ""
	for dir != filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			if real = filepath.Join(real, base); real != p {
				out = append(out, real)
			}
			break
		}
		dir, base = filepath.Dir(dir), filepath.Join(filepath.Base(dir), base)
	}
	return out
}

// applies reports whether a rule written for name covers tool: Edit and
// Write rules cover both file-writing tools, Read rules the reading ones.
func applies(rule Rule, tool string) bool {
	if rule.name.MatchString(tool) {
		return true
	}
	switch tool {
	case "Edit", "Write":
		return rule.name.MatchString("Edit") || rule.name.MatchString("Write")
	case "Glob", "Grep":
		return rule.name.MatchString("Read")
	}
	return false
}

func (c call) matches(rule Rule) bool {
	if c.tool == "Bash" && rule.kind == pathKind {
		return c.bashPaths(rule)
	}
	if !applies(rule, c.tool) {
		return false
	}
	switch rule.kind {
	case command:
		for _, cmd := range c.commands {
			if rule.cmd.MatchString(cmd) {
				return true
			}
		}
		return false
	case domain:
		return c.host != "" && rule.host.MatchString(c.host)
	case pathKind:
		for _, p := range c.paths {
			if globMatch(rule.glob, p) {
				return true
			}
		}
		return false
	}
	return true
}

// bashPaths matches a path rule against the files a Bash line names:
// Read rules its reads, Edit and Write rules its writes.
func (c call) bashPaths(rule Rule) bool {
	var paths []string
	if rule.name.MatchString("Read") {
		paths = append(paths, c.reads...)
	}
	if rule.name.MatchString("Edit") || rule.name.MatchString("Write") {
		paths = append(paths, c.writes...)
	}
	for _, p := range paths {
		if globMatch(rule.glob, p) {
			return true
		}
	}
	return false
}
