package modeltest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flower-run/flower/model"
)

// Demo is the scripted session of the "demo" model: it looks around the
// workspace, writes hello.txt (or appends the prompt to it when it exists),
// reads it back and reports. It decides from the request alone — how many
// tool results follow the person's last message — so it plays correctly
// across resumes and crashes.
func Demo() Responder {
	return func(r *Request) Turn {
		prompt, results := lastPrompt(r.Messages)
		switch len(results) {
		case 0:
			return Turn{Thinking: "Start by seeing what is in the workspace.",
				Text:      "I'll look at the workspace first.",
				ToolCalls: []ToolCall{{Name: "Glob", Input: `{"pattern":"*"}`}}}
		case 1:
			if strings.Contains(results[0], "hello.txt") {
				return Turn{Text: "hello.txt exists; I'll add your words to it.",
					ToolCalls: []ToolCall{{Name: "Bash", Input: bashAppend(prompt)}}}
			}
			return Turn{Text: "I'll create hello.txt.",
				ToolCalls: []ToolCall{{Name: "Write", Input: `{"file_path":"hello.txt","content":"hello\n"}`}}}
		case 2:
			return Turn{Text: "Let me check the result.",
				ToolCalls: []ToolCall{{Name: "Read", Input: `{"file_path":"hello.txt"}`}}}
		default:
			return Turn{Text: "Done. hello.txt now holds:\n\n" + results[len(results)-1] +
				"\n\n(This was the offline demo model: set ANTHROPIC_API_KEY or OPENAI_API_KEY for real work.)"}
		}
	}
}

// lastPrompt finds the person's last text message and the tool results
// that came after it.
func lastPrompt(msgs []model.Message) (prompt string, results []string) {
	for _, m := range msgs {
		if m.Role != model.User {
			continue
		}
		for _, b := range m.Content {
			switch v := b.(type) {
			case *model.Text:
				prompt, results = v.Text, nil
			case *model.ToolResult:
				results = append(results, v.Content)
			}
		}
	}
	return prompt, results
}

func bashAppend(prompt string) string {
	line := strings.NewReplacer("'", "", "\n", " ").Replace(prompt)
	cmd := fmt.Sprintf("echo '%s' >> hello.txt", line)
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return string(b)
}

// NewDemo starts the demo model: an Anthropic fake playing Demo.
func NewDemo() *Server { return NewAnthropic(Demo()) }
