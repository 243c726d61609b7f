package builtin

import (
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/flower-run/flower/sandbox"
	"github.com/flower-run/flower/tool"
)

// Defaults for the zero fields of Env.
const (
	DefaultBashTimeout    = 2 * time.Minute
	DefaultBashMaxTimeout = 10 * time.Minute
	DefaultOutputCap      = tool.DefaultOutputCap
	DefaultFetchTimeout   = 30 * time.Second
)

// Env is what the built-in tools share: where they work and their limits.
// Zero fields take the defaults above.
type Env struct {
	// Workspace is the absolute directory file tools are confined to and
	// Bash runs in. Empty means the current directory.
	Workspace string
	// AllowOutside lets file tools reach paths outside Workspace.
	AllowOutside bool
	// Forbidden are directories file tools never read, list or write,
	// whatever AllowOutside says: flower's run dir (issue 10).
	Forbidden []string
	// Protected are paths Write and Edit refuse, and what is under them:
	// the sandbox's read-only paths (sandbox.Protected), absolute.
	Protected []string
	// Hidden, when set, names the files Grep and Glob leave out of their
	// results, by absolute path: those the Read rules deny or ask for
	// (permission.Rules.Hides), so a search never shows what a Read
	// would not (issue 20 item 5).
	Hidden func(path string) bool
	// Environ is the environment of Bash's processes; nil: flower's own
	// through tool.EnvPolicy{} (the base allow list, no credential).
	Environ []string
	// BashTimeout applies when a call names none; BashMaxTimeout caps
	// what a call may ask for.
	BashTimeout, BashMaxTimeout time.Duration
	// OutputCap bounds the text a Bash, Grep or WebFetch result carries.
	OutputCap int
	// HTTPClient is used by WebFetch; nil means a client with a 30s timeout.
	HTTPClient *http.Client
	// Sandbox confines Bash's processes (package sandbox); nil runs them
	// without Landlock, still ending with their call and with flower.
	Sandbox *sandbox.Sandbox
	// Shells keeps Bash's background commands (run_in_background) and
	// offers BashOutput and KillShell; nil offers no background.
	Shells *Shells
}

// Builtins returns the built-in tools of R2.4 that need no runtime: Read,
// Write, Edit, Glob, Grep, Bash and WebFetch, in that order, then
// BashOutput and KillShell when env.Shells is set. Task lives in
// the agent package; its schema is TaskSchema.
func Builtins(env Env) []tool.Tool {
	env = env.withDefaults()
	tools := []tool.Tool{
		&Read{Env: env}, &Write{Env: env}, &Edit{Env: env}, &Glob{Env: env},
		&Grep{Env: env}, &Bash{Env: env}, &WebFetch{Env: env},
	}
	if env.Shells != nil {
		tools = append(tools, &BashOutput{Env: env}, &KillShell{Env: env})
	}
	return tools
}

// withDefaults fills zero fields. Every Run calls it, so a tool built as a
// bare struct literal still behaves.
func (e Env) withDefaults() Env {
	if e.Workspace == "" {
		e.Workspace, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(e.Workspace); err == nil {
		e.Workspace = abs
	}
	if e.BashTimeout <= 0 {
		e.BashTimeout = DefaultBashTimeout
	}
	if e.BashMaxTimeout <= 0 {
		e.BashMaxTimeout = DefaultBashMaxTimeout
	}
	if e.BashTimeout > e.BashMaxTimeout {
		e.BashTimeout = e.BashMaxTimeout
	}
	if e.OutputCap <= 0 {
		e.OutputCap = DefaultOutputCap
	}
	if e.HTTPClient == nil {
		e.HTTPClient = &http.Client{Timeout: DefaultFetchTimeout}
	}
	return e
}
