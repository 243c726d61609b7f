// Package durable is the bare SDK loop of bench/wall12 made durable the
// way a DBOS Transact user would (issue 19): one workflow per session,
// each model call and each tool call a DBOS step whose result is
// checkpointed in PostgreSQL before the loop goes on. bench/dbos/agent
// runs one session per process; bench/dbos runs many on a queue.
package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/flower-run/flower/bench/wall12/loop"
)

// Name is the workflow's registered name.
const Name = "session"

// Task is a workflow's input.
type Task struct {
	Prompt  string `json:"prompt"`
	Request string `json:"request"` // a request body whose system prompt and tools to send
	Model   string `json:"model"`
	Dir     string `json:"dir,omitempty"` // where the tools work ("": the current directory)
	Quiet   bool   `json:"quiet,omitempty"`
}

// result is a tool step's checkpointed output.
type result struct {
	Out   string `json:"out"`
	IsErr bool   `json:"is_err"`
}

// Session is the workflow: the bare loop with every call a step. It
// returns a summary line: the turns and the tools called.
func Session(ctx dbos.Context, in Task) (string, error) {
	system, tools, err := loop.Definitions(in.Request)
	if err != nil {
		return "", err
	}
	var out io.Writer = os.Stdout
	if in.Quiet {
		out = io.Discard
	}
	client := sdk.NewClient(option.WithMaxRetries(0))
	msgs := []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock(in.Prompt))}
	calls := map[string]int{}
	for turn := 1; ; turn++ {
		params := sdk.MessageNewParams{Model: sdk.Model(in.Model), MaxTokens: 8192, System: system, Tools: tools, Messages: msgs}
		raw, err := dbos.RunAsStep(ctx, func(context.Context) (string, error) {
			msg, err := loop.Call(client, params)
			return msg.RawJSON(), err
		}, dbos.WithStepName(fmt.Sprint("model", turn)))
		if err != nil {
			return "", fmt.Errorf("turn %d: %w", turn, err)
		}
		var msg sdk.Message
		if err := json.Unmarshal([]byte(raw), &msg); err != nil {
			return "", fmt.Errorf("turn %d: %w", turn, err)
		}
		msgs = append(msgs, msg.ToParam())
		var results []sdk.ContentBlockParamUnion
		for _, c := range msg.Content {
			switch c.Type {
			case "text":
				fmt.Fprintln(out, c.Text)
			case "tool_use":
				r, err := dbos.RunAsStep(ctx, func(context.Context) (result, error) {
					out, isErr := loop.RunToolIn(in.Dir, c.Name, c.Input)
					return result{out, isErr}, nil
				}, dbos.WithStepName(c.Name))
				if err != nil {
					return "", err
				}
				calls[c.Name]++
				fmt.Fprintf(out, "  [%s] %s\n", c.Name, loop.FirstLine(r.Out))
				results = append(results, sdk.NewToolResultBlock(c.ID, r.Out, r.IsErr))
			}
		}
		if msg.StopReason != sdk.StopReasonToolUse {
			return fmt.Sprintf("dbos · %d turns · Write %d, Bash %d, Read %d", turn, calls["Write"], calls["Bash"], calls["Read"]), nil
		}
		msgs = append(msgs, sdk.NewUserMessage(results...))
	}
}
