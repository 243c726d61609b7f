package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/tool"
)

// subagentInstructions frame a Task's child agent.
const subagentInstructions = `You are a subagent: another agent delegated one task to you. ` +
	`Do exactly that task with the tools you have, then end your turn with a concise report: ` +
	`what you did, what you found, and anything the delegating agent must know (files changed, ` +
	`open problems). Your final message is all it will see.`

// taskTool runs a child agent (R2.5). Its transcript lives under a sub-path
// of the parent's session key named after the call, so a Task cut by a crash
// continues its own session instead of starting over.
type taskTool struct{ rt *Runtime }

func (*taskTool) Name() string              { return "Task" }
func (t *taskTool) Description() string     { return t.description() }
func (t *taskTool) Schema() json.RawMessage { return t.schema() }
func (*taskTool) Class() tool.Class         { return tool.Effect }

type taskInput struct {
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	Type        string `json:"subagent_type"` // a named subagent (subagents.go)
}

func (t *taskTool) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	var in taskInput
	if err := json.Unmarshal(input, &in); err != nil || in.Prompt == "" {
		return tool.Errorf("Task needs a JSON object with a non-empty \"prompt\" (and a short \"description\")."), nil
	}
	call, ok := callFrom(ctx)
	if !ok {
		return tool.Result{}, errors.New("task: no calling session")
	}
	parent := call.s
	spec := Spec{Name: parent.spec.Name + "/task", Model: parent.spec.Model,
		Instructions: subagentInstructions, Tools: childTools(parent), MaxTurns: parent.spec.MaxTurns}
	if in.Type != "" {
		if err := t.named(&spec, in.Type); err != nil {
			return tool.Errorf("Task: %v.", err), nil
		}
	}
	if parent.spec.MaxBudget > 0 {
		// A child's MaxBudget of 0 or less would mean no limit at all.
		spec.MaxBudget = parent.spec.MaxBudget - parent.res.Cost
		if spec.MaxBudget <= 0 {
			return tool.Errorf("Not run: the budget of %s is spent.", model.USD(parent.spec.MaxBudget)), nil
		}
	}
	label := in.Description
	if label == "" {
		label = "task"
	}
	sub := subPath(parent.opts.subPath, "task-"+call.id)
	prompt, err := t.prompt(ctx, parent, sub, in.Prompt)
	if err != nil {
		return tool.Result{}, err
	}
	res := t.rt.Run(ctx, spec, prompt, RunOptions{Resume: parent.id, Sink: parent.opts.Sink,
		subPath: sub, subagent: label, step: parent.step})
	parent.res.Cost += res.Cost
	if res.Stop == StopDiscarded {
		// The step's policy abandons the whole run, not just this call.
		return tool.Result{}, fmt.Errorf("%w (in subagent %q)", res.Err, label)
	}
	if !res.OK {
		return tool.Errorf("The subagent did not finish: %s\n%s", res.Error, res.Text), nil
	}
	return tool.Result{Content: res.Text}, nil
}

// prompt is what the child is sent: its task, unless a crash cut this
// call after the child's session began. Then the retried call continues
// that session as it stands (an ended child returns its report) instead
// of sending the task a second time.
func (t *taskTool) prompt(ctx context.Context, parent *session, sub, task string) (string, error) {
	_, started, err := t.rt.store.Last(ctx, t.rt.key(parent.id, sub), store.KindUser)
	if err != nil {
		return "", fmt.Errorf("task: look up the subagent's session: %w", err)
	}
	if started {
		return "", nil
	}
	return task, nil
}

// childTools are the parent's tools without Task: subagents do not nest.
func childTools(parent *session) []string {
	names := parent.spec.Tools
	if names == nil {
		names = parent.reg.Names()
	}
	var out []string
	for _, n := range names {
		if n != "Task" {
			out = append(out, n)
		}
	}
	return out
}

func subPath(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "/" + child
}
