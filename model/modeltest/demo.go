package modeltest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flower-run/flower/model"
)

// Demo is the scripted model of "--model demo". It plays each step of the
// starter workflow (recognized by its system prompt) and, for flower once,
// a short session that writes hello.txt (or appends the prompt to it when
// it exists), reads it back and reports. It decides from the request alone
// — how many tool results follow the person's last message — so it plays
// correctly across resumes and crashes.
func Demo() Responder {
	return func(r *Request) Turn {
		prompt, results := lastPrompt(r.Messages)
		switch {
		case strings.Contains(r.System, "the clarify step"):
			return demoWrite(results, ".flower/notes/brief.md", demoBrief(prompt), "The brief is written.")
		case strings.Contains(r.System, "the goals step") && strings.HasPrefix(prompt, "The person added"):
			return demoAddGoal(demoPhrase(prompt), results)
		case strings.Contains(r.System, "the goals step"):
			return demoWrite(results, ".flower/notes/goals.md", demoGoals, "goals.md has 3 checks.")
		case strings.Contains(r.System, "the judge of flower"):
			return demoJudge(results)
		}
		return demoHello(prompt, results)
	}
}

func demoHello(prompt string, results []string) Turn {
	n := len(results)
	switch {
	case n == 0:
		return Turn{Thinking: "Start by seeing what is in the workspace.",
			Text:      "I'll look at the workspace first.",
			ToolCalls: []ToolCall{{Name: "Glob", Input: `{"pattern":"*"}`}}}
	case n == 1 && !strings.Contains(results[0], "hello.txt"):
		return Turn{Text: "I'll create hello.txt.",
			ToolCalls: []ToolCall{{Name: "Write", Input: `{"file_path":"hello.txt","content":"hello\n"}`}}}
	case n == 1 && demoPhrase(prompt) != "":
		return Turn{Text: "hello.txt exists; I'll add your words to it.",
			ToolCalls: []ToolCall{{Name: "Bash", Input: bashAppend(demoPhrase(prompt))}}}
	case strings.Contains(results[n-1], "1\t"): // the Read came back
		return Turn{Text: "Done. hello.txt now holds:\n\n" + results[n-1] +
			"\n\n(This was the offline demo model: set ANTHROPIC_API_KEY or OPENAI_API_KEY for real work.)"}
	default:
		return Turn{Text: "Let me check hello.txt.",
			ToolCalls: []ToolCall{{Name: "Read", Input: `{"file_path":"hello.txt"}`}}}
	}
}

// demoPhrase is what the person asked for: a short prompt as is, or the
// quoted paragraph of a workflow prompt; a long generic prompt has none.
func demoPhrase(prompt string) string {
	if parts := strings.Split(prompt, "\n\n"); len(parts) >= 3 {
		return strings.TrimSpace(parts[1])
	}
	if len(prompt) <= 80 {
		return prompt
	}
	return ""
}

// demoWrite writes one file, then ends its turn.
func demoWrite(results []string, path, content, done string) Turn {
	if len(results) > 0 {
		return Turn{Text: done}
	}
	b, _ := json.Marshal(map[string]string{"file_path": path, "content": content})
	return Turn{Text: "Writing " + path + ".", ToolCalls: []ToolCall{{Name: "Write", Input: string(b)}}}
}

func demoBrief(task string) string {
	if i := strings.Index(task, "\n\n"); i >= 0 { // "The task, in the person's words:\n\n<task>\n\n..."
		task = strings.TrimSpace(strings.SplitN(task[i+2:], "\n\n", 2)[0])
	}
	return "## Goal\n\n" + task + " (offline demo: the work is a hello.txt that says hello).\n\n" +
		"## Done when\n\n- hello.txt exists and its first line is hello\n\n" +
		"## Constraints\n\nNone stated.\n\n" +
		"## Unknowns and assumptions\n\n- The demo model asks nothing and assumes hello.txt is what is wanted.\n"
}

const demoGoals = "# Goals\n\n- [ ] hello.txt exists in the workspace\n- [ ] its first line is exactly `hello`\n- [ ] `cat hello.txt` exits 0\n"

// demoCheck is the judge's check: hello.txt's first line, then every
// "has a line" check a wake's phrase added to goals.md.
const demoCheck = `head -1 hello.txt; sed -n 's/^- \[ \] hello.txt has a line: //p' .flower/notes/goals.md | ` +
	`while IFS= read -r p; do if grep -qF -- "$p" hello.txt; then echo "ok: $p"; else echo "missing: $p"; fi; done`

// demoAddGoal adds a check for a wake's phrase to goals.md: it reads the
// checks there, then writes them back with one more.
func demoAddGoal(phrase string, results []string) Turn {
	switch len(results) {
	case 0:
		return Turn{Text: "Reading the checks so far.", ToolCalls: []ToolCall{{Name: "Read", Input: `{"file_path":".flower/notes/goals.md"}`}}}
	case 1:
		var kept []string
		for _, l := range strings.Split(strings.TrimRight(results[0], "\n"), "\n") {
			if _, text, ok := strings.Cut(l, "\t"); ok { // Read numbers its lines: "     1\ttext"
				kept = append(kept, text)
			}
		}
		line := strings.NewReplacer("'", "", "\n", " ").Replace(phrase)
		if r := []rune(line); len(r) > 60 {
			line = string(r[:60])
		}
		kept = append(kept, "- [ ] hello.txt has a line: "+line)
		b, _ := json.Marshal(map[string]string{"file_path": ".flower/notes/goals.md", "content": strings.Join(kept, "\n") + "\n"})
		return Turn{Text: "Adding a check for your addition.", ToolCalls: []ToolCall{{Name: "Write", Input: string(b)}}}
	}
	return Turn{Text: "goals.md has a check for the addition."}
}

func demoJudge(results []string) Turn {
	switch len(results) {
	case 0:
		b, _ := json.Marshal(map[string]string{"command": demoCheck})
		return Turn{Text: "Checking hello.txt myself.", ToolCalls: []ToolCall{{Name: "Bash", Input: string(b)}}}
	case 1:
		out := strings.TrimSpace(results[0])
		pass := strings.HasPrefix(out, "hello") && !strings.Contains(out, "missing: ")
		b, _ := json.Marshal(map[string]any{"pass": pass, "findings": "checked hello.txt: " + strings.ReplaceAll(out, "\n", "; ")})
		return Turn{ToolCalls: []ToolCall{{Name: "verdict", Input: string(b)}}}
	default:
		return Turn{Text: "Verdict given."}
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
	if r := []rune(line); len(r) > 60 {
		line = string(r[:60]) + "..."
	}
	cmd := fmt.Sprintf("echo '%s' >> hello.txt", line)
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return string(b)
}

// NewDemo starts the demo model: an Anthropic fake playing Demo.
func NewDemo() *Server { return NewAnthropic(Demo()) }
