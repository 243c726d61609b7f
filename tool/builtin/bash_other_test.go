//go:build !linux

package builtin

// killedText starts the result of a shell killed by SIGKILL.
const killedText = "Command failed: signal: killed"
