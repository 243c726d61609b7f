// Package starter is flower's four-step starter flow (clarify, goals,
// work, judge) and the workbench notes it keeps in the workspace: the
// brief and the goals. It sits apart from the engine (package workflow),
// so an embedder gets the engine without the starter's prompts.
package starter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/internal/atomicfile"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow"
)

// Options shape the starter flow of flower "task" (R3.15).
type Options struct {
	Workspace string // absolute
	Task      string // the task of a new thread
	// Said are words the person typed on this wake while the brief is
	// unfinished: a clarification that goes on (connected, or cut by a
	// crash) receives them.
	Said     string
	Phrase   string // added on wake to a confirmed brief (R3.9)
	Model    string
	Rounds   int
	MaxTurns int
	Budget   float64
	// Recheck has a fresh judge check the work again and does nothing
	// else: work is frozen and a failed verdict sends no findings back
	// (issue 11: Enter after a pass).
	Recheck bool
	// Keep, when set, keeps the brief and the goals in this store and
	// writes back the ones the agent deleted, as each step starts
	// (SyncNotes).
	Keep store.Store
}

// Least privilege: each step is offered only the tools it needs (R3.15).
var (
	ClarifyTools = []string{"Read", "Glob", "Grep", "Write", "ask", "inbox"}
	GoalsTools   = []string{"Read", "Glob", "Grep", "Write"}
	WorkTools    = []string{"Read", "Write", "Edit", "Glob", "Grep", "Bash", "Task", "WebFetch", "ask", "inbox", MCPTools}
	JudgeTools   = []string{"Read", "Glob", "Grep", "Bash", workflow.VerdictName}
)

// MCPTools is the pattern of every MCP server's tools (package mcp): the
// work step may use them, so the servers start when work begins.
const MCPTools = "mcp__*"

// ClarifyCrashPrompt continues a clarification a crash cut (R3.10).
const ClarifyCrashPrompt = "Continue the clarification you could not finish; this is not a restart. " +
	"Do not repeat questions already answered above: go on from where you were, then write the brief."

// New builds the four-step starter workflow: clarify, goals, work, judge.
func New(o Options) *workflow.Workflow {
	spec := func(name, instructions string, tools []string) agent.Spec {
		return agent.Spec{Name: name, Instructions: instructions, Tools: tools, Model: o.Model,
			MaxTurns: o.MaxTurns, MaxBudget: o.Budget}
	}
	keep := &keeper{s: o.Keep, ws: o.Workspace}
	sync := func() { // best effort: the notes are an extra
		if o.Keep != nil {
			keep.sync(context.Background())
		}
	}
	brief := func() Brief { sync(); return ParseBrief(readNote(o.Workspace, BriefPath)) }
	notes := func(rels ...string) func() string {
		read := notes(o.Workspace, rels...)
		return func() string { sync(); return read() }
	}
	resume, crash := "The brief at "+BriefPath+" is missing or incomplete. Finish the clarification and write it with its four sections.", ClarifyCrashPrompt
	if o.Said != "" {
		// A clarification that goes on must not drop what the person typed
		// on this wake.
		said := "\n\nThe person has just said, in their words:\n\n" + o.Said
		resume, crash = resume+said, crash+said
	}
	w := workflow.New(
		workflow.Step{Name: "clarify", Spec: spec("clarify", clarifyInstructions, ClarifyTools),
			Prompt:       clarifyPrompt(o.Task, o.Said),
			ResumePrompt: resume,
			CrashPrompt:  crash,
			Frozen:       func() bool { return brief().Complete() }},
		workflow.Step{Name: "goals", Spec: spec("goals", goalsInstructions, GoalsTools),
			Prompt:       "Derive " + GoalsPath + " from the brief at " + BriefPath + ".",
			Context:      notes(BriefPath),
			ResumePrompt: goalsResume(o.Phrase),
			Frozen:       func() bool { sync(); return o.Phrase == "" && CountChecks(readNote(o.Workspace, GoalsPath)) > 0 }},
		workflow.Step{Name: "work", Spec: spec("work", workInstructions, WorkTools),
			Prompt:       "Do the work. The brief is " + BriefPath + " and the checks you will be judged on are in " + GoalsPath + ".",
			Context:      notes(BriefPath, GoalsPath),
			ResumePrompt: workResume(o.Phrase),
			Frozen:       func() bool { return o.Recheck }},
	)
	if o.Phrase != "" {
		// The phrase is durable in the run before it reaches the brief: a
		// crash in between adds it on the wake that finishes the run.
		w.Begin = func(run store.Run) error { return AddOnWake(o.Workspace, o.Phrase, run.Created) }
	}
	rounds := o.Rounds
	if o.Recheck {
		rounds = workflow.NoRework // judge once, no rework
	}
	w.Judge = &workflow.Judge{Spec: spec("judge", judgeInstructions, JudgeTools), Work: "work", Rounds: rounds,
		Context: notes(BriefPath, GoalsPath),
		Prompt: "Judge the work in this directory against every check in " + GoalsPath + " (the brief is " + BriefPath + "). " +
			"Verify each check yourself, then call verdict."}
	return w
}

func clarifyPrompt(task, said string) string {
	p := "The task, in the person's words:\n\n" + task
	if said != "" && said != task {
		p += "\n\nThe person has just said, in their words:\n\n" + said
	}
	return p + "\n\nClarify it and write " + BriefPath + "."
}

func goalsResume(phrase string) string {
	if phrase == "" {
		return GoalsPath + " is missing or has no checks. Derive it from the brief at " + BriefPath + "."
	}
	return "The person added to the brief (see \"## Added on wake\" in " + BriefPath + "):\n\n" + phrase +
		"\n\nUpdate " + GoalsPath + ": keep the existing checks and add checks that verify the addition."
}

func workResume(phrase string) string {
	if phrase == "" {
		return "You are continuing after a pause. Re-read " + BriefPath + " and " + GoalsPath +
			", check the workspace, finish anything left undone, verify it, then end your turn with a short report."
	}
	return "The person added this (it is now in " + BriefPath + " under \"## Added on wake\", and " + GoalsPath +
		" has checks for it):\n\n" + phrase + "\n\nDo it, keep everything that already works working, verify, then end your turn with a short report."
}

// AddOnWake appends a phrase to the brief under "## Added on wake" with the
// time, atomically (R3.9). A brief that already has that line is left as
// it is, so the wake that finishes a cut run adds the phrase once.
func AddOnWake(workspace, phrase string, now time.Time) error {
	path := filepath.Join(workspace, BriefPath)
	old, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("add to brief: %w", err)
	}
	line := now.Format("2006-01-02 15:04") + ": " + phrase + "\n"
	if strings.Contains(string(old), "\n"+line) {
		return nil
	}
	text := strings.TrimRight(string(old), "\n") + "\n\n## Added on wake\n\n" + line
	return atomicfile.WriteFile(path, []byte(text), 0o644)
}
