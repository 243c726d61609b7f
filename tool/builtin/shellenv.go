package builtin

import "os"

// ShellEnv is the environment Bash's commands get, from this process's:
// the one list other commands run for the agent use too (the project's
// hooks), so that what Bash may not see, they may not see either.
func ShellEnv() []string { return scrubEnv(os.Environ()) }
