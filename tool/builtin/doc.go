// Package builtin holds flower's built-in tools (R2.4): Bash with its
// background shells, Read, Write, Edit, Grep, Glob and WebFetch, all
// confined to an Env's workspace and, for Bash, to the sandbox. Builtins
// returns the set an agent gets by default; a custom tool needs only
// package tool.
package builtin
