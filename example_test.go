package flower_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flower-run/flower"
	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/model/modeltest"
	"github.com/flower-run/flower/tool"
	"github.com/flower-run/flower/workflow"
)

// tempDirs makes a workspace and a run dir; done removes both.
func tempDirs() (ws, runDir string, done func()) {
	root, err := os.MkdirTemp("", "flower-example")
	if err != nil {
		panic(err)
	}
	ws, runDir = filepath.Join(root, "ws"), filepath.Join(root, "state")
	if err := os.Mkdir(ws, 0o755); err != nil {
		panic(err)
	}
	// The project index (ids of projects, found again if they move) in
	// the example's own state home, not the person's running the tests.
	home, had := os.LookupEnv("XDG_STATE_HOME")
	os.Setenv("XDG_STATE_HOME", filepath.Join(root, "home"))
	return ws, runDir, func() {
		if had {
			os.Setenv("XDG_STATE_HOME", home)
		} else {
			os.Unsetenv("XDG_STATE_HOME")
		}
		os.RemoveAll(root)
	}
}

// Open a workspace, start the runtime on the embedded demo model, and run
// one agent on a prompt: the same path `flower once --model demo` takes.
func ExampleOpen() {
	ws, runDir, done := tempDirs()
	defer done()
	ctx := context.Background()

	h, err := flower.Open(ctx, flower.Options{Workspace: ws, RunDir: runDir, Model: "demo"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	if err := h.Start(ctx, flower.StartOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	res := h.Once(ctx, "say hello", flower.OnceOptions{})
	data, _ := os.ReadFile(filepath.Join(ws, "hello.txt"))
	fmt.Printf("ok=%v turns=%d hello.txt=%q\n", res.OK, res.Turns, data)
	// Output: ok=true turns=4 hello.txt="hello\n"
}

// shout is a tool of the embedder's own: an effect, so flower makes its
// intent durable before it runs and never runs a call of it twice.
type shout struct{ heard *[]string }

func (shout) Name() string        { return "shout" }
func (shout) Description() string { return "Shouts a word." }
func (shout) Schema() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}}}`)
}
func (shout) Class() tool.Class { return tool.Effect }
func (s shout) Run(_ context.Context, in json.RawMessage) (tool.Result, error) {
	var v struct{ Word string }
	if err := json.Unmarshal(in, &v); err != nil {
		return tool.Errorf("bad input: %v", err), nil
	}
	*s.heard = append(*s.heard, strings.ToUpper(v.Word))
	return tool.Result{Content: "shouted"}, nil
}

// Give every agent a tool of your own, and drive a workflow of your own
// steps. Here a fake Anthropic server (package modeltest) plays the model.
func Example_customWorkflowAndTool() {
	srv := modeltest.NewAnthropic(modeltest.Script(
		modeltest.Turn{ToolCalls: []modeltest.ToolCall{{Name: "shout", Input: `{"word":"hello"}`}}},
		modeltest.Turn{Text: "Shouted."},
	))
	defer srv.Close()
	os.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	os.Setenv("ANTHROPIC_API_KEY", "test")
	defer os.Unsetenv("ANTHROPIC_BASE_URL")
	defer os.Unsetenv("ANTHROPIC_API_KEY")
	ws, runDir, done := tempDirs()
	defer done()
	ctx := context.Background()

	h, err := flower.Open(ctx, flower.Options{Workspace: ws, RunDir: runDir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	var heard []string
	if err := h.Start(ctx, flower.StartOptions{Tools: []tool.Tool{shout{&heard}}}); err != nil {
		fmt.Println(err)
		return
	}
	w := workflow.New(workflow.Step{Name: "greet", Prompt: "Shout hello.",
		Spec: agent.Spec{Name: "greet", Instructions: "You greet loudly.", Tools: []string{"shout"}}})
	out := h.Run(ctx, w, workflow.Options{Task: "greet"})
	fmt.Printf("passed=%v heard=%v\n", out.Passed, heard)
	// Output: passed=true heard=[HELLO]
}
