package main

import "syscall"

// Not dumpable: the kernel then lets no process of the same user (but
// root) read /proc/<flower>/environ or attach to flower, which holds the
// API keys in its environment and memory (issue 10). Children are
// dumpable again after exec, so tools are unaffected. The secrets are
// also scrubbed from everything flower writes: this is a second layer,
// and no layer against root.
func init() {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0)
}
