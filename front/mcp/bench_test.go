//go:build unix

package mcpserver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	mcpserver "github.com/flower-run/flower/front/mcp"
)

// BenchmarkTaskStart is what task_start costs until it returns, with the
// task in this process and in a process of its own (the test binary as
// Drive), on the demo model; each task then runs to its verdict, off the
// clock. The difference is one process start, flower.Open in that process
// and the ready line.
func BenchmarkTaskStart(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"in_process", "own_process"} {
		b.Run(mode, func(b *testing.B) {
			o := env(b, "demo")
			if mode == "own_process" {
				o.Command = []string{exe}
				b.Setenv(driveEnv, "1")
				b.Setenv(driveModel, "demo")
			}
			cs := connect(b, mcpserver.New(o))
			for i := 0; b.Loop(); i++ {
				dir := filepath.Join(b.TempDir(), fmt.Sprint("p", i))
				if text, isErr := cs.call(b, "task_start", map[string]any{"directory": dir, "task": "say hello"}, nil); isErr {
					b.Fatalf("task_start: %s", text)
				}
				b.StopTimer()
				cs.waitState(b, dir, mcpserver.StatePassed)
				b.StartTimer()
			}
		})
	}
}
