//go:build !linux

package tool

// killedText starts the result of a shell killed by SIGKILL.
const killedText = "Command failed: signal: killed"
