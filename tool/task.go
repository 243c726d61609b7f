package tool

import "encoding/json"

// TaskName is the name of the subagent tool. The agent package implements
// it, since it needs the runtime; its schema and description live here with
// the other built-ins so all of R2.4 reads the same.
const TaskName = "Task"

// TaskDescription is the Task tool's description, for the model.
const TaskDescription = `Hands a self-contained piece of work to a subagent: a fresh agent with its own context and the same tools, which works on it to the end and returns one final report as this tool's result.

- Use it for work that needs many steps you do not need to see: searching a large codebase for something, researching a question, trying an approach. Only the report enters your context, which keeps it small.
- The subagent sees nothing of this conversation. prompt must carry everything it needs: the goal, the relevant paths and facts, constraints, and what the report should contain (for example "list the files and line numbers", "say whether the tests pass").
- description is a short label of 3 to 5 words shown to the user, such as "Find config loading code".
- The subagent's result is not shown to the user; relay what matters.
- For a single file read or one search, use Read, Glob or Grep directly: that is faster.`

// TaskSchema is the Task tool's input schema: Task{description, prompt}.
var TaskSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "description": {"type": "string", "description": "A short (3-5 word) label for the task, shown to the user."},
    "prompt": {"type": "string", "description": "The complete instructions for the subagent: goal, context, constraints and what to report back."}
  },
  "required": ["description", "prompt"]
}`)
