// Package loop is the bare SDK loop's parts that bench/wall12's bare
// loop and bench/dbos's DBOS agent share (issue 19): one streamed call,
// the request's definitions, and the three tools run the plain way, so
// the two peers of flower differ only in what they keep durable.
package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
)

// Call streams one answer, as flower does.
func Call(client sdk.Client, params sdk.MessageNewParams) (sdk.Message, error) {
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

// Definitions are the system prompt and tools to send: those of the
// request in file, or minimal ones.
func Definitions(file string) ([]sdk.TextBlockParam, []sdk.ToolUnionParam, error) {
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

// RunTool runs one call in the current directory; a failure is a result
// the model sees.
func RunTool(name string, input json.RawMessage) (string, bool) {
	return RunToolIn("", name, input)
}

// RunToolIn runs one call in directory dir ("": the current one), as
// sessions side by side in one process need.
func RunToolIn(dir, name string, input json.RawMessage) (string, bool) {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return err.Error(), true
	}
	if dir != "" && in.FilePath != "" && !filepath.IsAbs(in.FilePath) {
		in.FilePath = filepath.Join(dir, in.FilePath)
	}
	switch name {
	case "Write":
		if err := os.WriteFile(in.FilePath, []byte(in.Content), 0o644); err != nil {
			return err.Error(), true
		}
		return fmt.Sprintf("Wrote %s (%d bytes written)", in.FilePath, len(in.Content)), false
	case "Bash":
		cmd := exec.Command("bash", "-c", in.Command)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
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

func FirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
