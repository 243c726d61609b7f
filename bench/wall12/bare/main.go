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
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
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
	system, tools, err := definitions(request)
	if err != nil {
		return err
	}
	// option.WithBaseURL and WithAPIKey are read from ANTHROPIC_BASE_URL
	// and ANTHROPIC_API_KEY by the SDK's defaults.
	client := sdk.NewClient(option.WithMaxRetries(0))
	msgs := []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock(prompt))}
	calls := map[string]int{}
	for turn := 1; ; turn++ {
		msg, err := call(client, sdk.MessageNewParams{Model: sdk.Model(modelName), MaxTokens: 8192,
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
				out, isErr := runTool(c.Name, c.Input)
				calls[c.Name]++
				fmt.Printf("  [%s] %s\n", c.Name, firstLine(out))
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

// call streams one answer, as flower does.
func call(client sdk.Client, params sdk.MessageNewParams) (sdk.Message, error) {
	stream := client.Messages.NewStreaming(context.Background(), params)
	defer stream.Close()
	var msg sdk.Message
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			return msg, err
		}
	}
	return msg, stream.Err()
}

// definitions are the system prompt and tools to send: those of the
// request in file, or minimal ones.
func definitions(file string) ([]sdk.TextBlockParam, []sdk.ToolUnionParam, error) {
	if file == "" {
		str := map[string]any{"type": "string"}
		tool := func(name, desc string, props ...string) sdk.ToolUnionParam {
			p := map[string]any{}
			for _, n := range props {
				p[n] = str
			}
			return sdk.ToolUnionParam{OfTool: &sdk.ToolParam{Name: name, Description: sdk.String(desc),
				InputSchema: sdk.ToolInputSchemaParam{Properties: p, Required: props}}}
		}
		return []sdk.TextBlockParam{{Text: "You are an agent that works in the current directory with the tools you have."}},
			[]sdk.ToolUnionParam{
				tool("Bash", "Runs a shell command.", "command"),
				tool("Read", "Reads a file.", "file_path"),
				tool("Write", "Writes a file.", "file_path", "content"),
			}, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	var body struct {
		System []sdk.TextBlockParam `json:"system"`
		Tools  []sdk.ToolUnionParam `json:"tools"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, nil, fmt.Errorf("read request %s: %w", file, err)
	}
	return body.System, body.Tools, nil
}

// runTool runs one call; a failure is a result the model sees.
func runTool(name string, input json.RawMessage) (string, bool) {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return err.Error(), true
	}
	switch name {
	case "Write":
		if err := os.WriteFile(in.FilePath, []byte(in.Content), 0o644); err != nil {
			return err.Error(), true
		}
		return fmt.Sprintf("Wrote %s (%d bytes written)", in.FilePath, len(in.Content)), false
	case "Bash":
		out, err := exec.Command("bash", "-c", in.Command).CombinedOutput()
		if err != nil {
			return string(out) + err.Error(), true
		}
		return string(out), false
	case "Read":
		data, err := os.ReadFile(in.FilePath)
		if err != nil {
			return err.Error(), true
		}
		var b strings.Builder
		for i, line := range strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n") {
			fmt.Fprintf(&b, "%6d\t%s", i+1, line)
		}
		return b.String(), false
	}
	return "no tool " + name, true
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
