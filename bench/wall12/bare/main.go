// Command bare is the bare SDK loop that flower once is compared with,
// end to end, in bench/wall12/run.sh (issue 19): the official Anthropic
// Go SDK streaming each answer from ANTHROPIC_BASE_URL and running the
// tools it asks for itself (Write: os.WriteFile; Bash: bash -c; Read:
// os.ReadFile, numbered as flower numbers it) in the working directory,
// with no store, no sandbox and no retries, until an answer does not end
// in tool_use.
//
// With -request FILE (the first request flower sent, as the fake's -dump
// writes it) it sends flower's system prompt and tool definitions, so
// both processes send requests of about the same size; without it, a
// short prompt and minimal definitions of the three tools.
//
//	bare [-request FILE] [-model NAME] PROMPT
package main

import (
	"flag"
	"fmt"
	"os"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/flower-run/flower/bench/wall12/loop"
)

func main() {
	request := flag.String("request", "", "take the system prompt and tool definitions from this request body")
	modelName := flag.String("model", "claude-sonnet-4-6", "the model to ask")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: bare [-request FILE] [-model NAME] PROMPT")
		os.Exit(2)
	}
	if err := run(*request, *modelName, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
}

func run(request, modelName, prompt string) error {
	system, tools, err := loop.Definitions(request)
	if err != nil {
		return err
	}
	// option.WithBaseURL and WithAPIKey are read from ANTHROPIC_BASE_URL
	// and ANTHROPIC_API_KEY by the SDK's defaults.
	client := sdk.NewClient(option.WithMaxRetries(0))
	msgs := []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock(prompt))}
	calls := map[string]int{}
	for turn := 1; ; turn++ {
		msg, err := loop.Call(client, sdk.MessageNewParams{Model: sdk.Model(modelName), MaxTokens: 8192,
			System: system, Tools: tools, Messages: msgs})
		if err != nil {
			return fmt.Errorf("turn %d: %w", turn, err)
		}
		msgs = append(msgs, msg.ToParam())
		var results []sdk.ContentBlockParamUnion
		for _, c := range msg.Content {
			switch c.Type {
			case "text":
				fmt.Println(c.Text)
			case "tool_use":
				out, isErr := loop.RunTool(c.Name, c.Input)
				calls[c.Name]++
				fmt.Printf("  [%s] %s\n", c.Name, loop.FirstLine(out))
				results = append(results, sdk.NewToolResultBlock(c.ID, out, isErr))
			}
		}
		if msg.StopReason != sdk.StopReasonToolUse {
			fmt.Printf("\nbare · %d turns · Write %d, Bash %d, Read %d\n", turn, calls["Write"], calls["Bash"], calls["Read"])
			return nil
		}
		msgs = append(msgs, sdk.NewUserMessage(results...))
	}
}
