//go:build unix

package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model/modeltest"
)

// A real Bash command is running when the person interrupts: it is not
// killed (a killed command would be an ambiguous effect, seed 004); it
// finishes, its output is the result the model sees, and the run goes on
// with the note (issue 11). The command blocks reading a FIFO, so the test
// knows it is running (the writer's open returns) without sleeping.
func TestInterruptWaitsForARunningBash(t *testing.T) {
	var f *fixture
	f = newFixture(t, modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{call("Bash", `{"command":"cat in.fifo > out.txt && echo bash finished"}`)}},
		modeltest.Turn{Text: "Continuing with the note."},
	))
	fifo := filepath.Join(f.ws, "in.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once cat has opened it: Bash is running
		if err != nil {
			t.Error(err)
			return
		}
		f.rt.Interrupt("then stop there")
		w.WriteString("written after the interrupt\n")
		w.Close()
	}()
	res := f.run(agent.Spec{}, "go", agent.RunOptions{})
	if !res.OK || res.Text != "Continuing with the note." {
		t.Fatalf("result = %+v", res)
	}
	out, _ := os.ReadFile(filepath.Join(f.ws, "out.txt"))
	if string(out) != "written after the interrupt\n" {
		t.Errorf("out.txt = %q: the command was cut", out)
	}
	got := lastUserText(f.srv.Requests()[1])
	if !strings.Contains(got, "bash finished") || !strings.HasSuffix(got, "T:then stop there;") {
		t.Errorf("the model got %q", got)
	}
}
