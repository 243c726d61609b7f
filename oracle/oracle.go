// Package oracle answers a side question about a run in progress ("how far
// along are you?") without disturbing it (R6.5). The oracle is a separate,
// read-only agent: it may only Read, Glob and Grep, it is given the run's
// latest events and the workbench notes, and it keeps its sessions in its
// own runtime under <run dir>/aside, so neither the main session store nor
// the manifest ever sees it. The question never enters the working agent's
// context, and the working agent never stops for it.
package oracle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/flower-run/flower/agent"
	"github.com/flower-run/flower/event"
	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/permission"
	"github.com/flower-run/flower/resilience"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/tool"
	"github.com/flower-run/flower/tool/builtin"
)

// The oracle's limits (R6.5).
const (
	MaxTurns  = 12
	MaxBudget = 0.50 // USD per question
	Recent    = 60   // events given in the prompt
	AsideDir  = "aside"
)

// Tools are the only tools the oracle may use: it reads, it never acts.
var Tools = []string{"Read", "Glob", "Grep"}

// Notes bounds, so a huge note cannot crowd the question out.
const (
	noteLimit  = 8000  // characters of one note in the prompt
	notesLimit = 32000 // characters of all notes together
	eventLimit = 400   // characters of one event's text
)

// Options configure an Oracle.
type Options struct {
	Workspace string // the run's workspace (absolute); the oracle reads it
	RunDir    string // the run's run dir; the oracle's store is <RunDir>/aside/sessions.db
	Provider  model.Provider
	Model     string
	Retry     resilience.Retrier // how failed model calls are retried; zero: the default policy
	// Notes is the workbench notes directory; default
	// <Workspace>/.flower/notes.
	Notes string
	// Permissions are the run's rules: a deny on Read covers the oracle's
	// reads too (R9.3). Nil allows every read.
	Permissions *permission.Rules
	// Secrets are scrubbed from what its tools return (issue 10).
	Secrets *tool.Secrets
}

// Oracle answers side questions. Observe is its event sink; Ask and
// Observe are safe from any goroutine.
type Oracle struct {
	opts Options

	mu     sync.Mutex    // guards recent
	recent []event.Event // the latest events, oldest first, at most Recent

	// turn holds the right to run a question: one at a time, so a person
	// who asks twice does not pay twice in parallel. Whoever holds it may
	// use rt and closed.
	turn   chan struct{}
	rt     *agent.Runtime // opened on the first question
	store  *sqlite.DB     // rt's store, closed by Close
	closed bool
}

// New returns an oracle. Nothing is opened until the first question.
func New(opts Options) *Oracle {
	if opts.Notes == "" {
		opts.Notes = filepath.Join(opts.Workspace, ".flower", "notes")
	}
	return &Oracle{opts: opts, turn: make(chan struct{}, 1)}
}

// Observe keeps e among the latest events. Usage events are left out:
// they tell nothing about progress and would crowd out those that do.
func (o *Oracle) Observe(e event.Event) {
	if e.Kind == event.Usage {
		return
	}
	e.Raw = nil
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.recent) == Recent {
		o.recent = slices.Delete(o.recent, 0, 1)
	}
	o.recent = append(o.recent, e)
}

// ErrClosed is returned by Ask after Close.
var ErrClosed = errors.New("oracle: closed")

// Ask answers question from the latest events, the notes and what the
// oracle reads in the workspace. It waits for an earlier question to be
// answered first, or for ctx.
func (o *Oracle) Ask(ctx context.Context, question string) (string, error) {
	question = strings.TrimSpace(question)
	if question == "" {
		return "", errors.New("oracle: the question is empty")
	}
	select {
	case o.turn <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("oracle: %w", ctx.Err())
	}
	defer func() { <-o.turn }()
	if o.closed {
		return "", ErrClosed
	}
	if o.rt == nil {
		if err := o.open(); err != nil {
			return "", fmt.Errorf("oracle: %w", err)
		}
	}
	spec := agent.Spec{Name: "oracle", Instructions: instructions, Tools: Tools,
		MaxTurns: MaxTurns, MaxBudget: MaxBudget, Model: o.opts.Model}
	res := o.rt.Run(ctx, spec, o.prompt(question), agent.RunOptions{})
	if strings.TrimSpace(res.Text) == "" {
		if res.Error != "" {
			return "", fmt.Errorf("oracle: %s", res.Error)
		}
		return "", errors.New("oracle: no answer")
	}
	return res.Text, nil
}

// open builds the oracle's own runtime over its own store, apart from the
// main run's (its sessions are no steps of the run).
func (o *Oracle) open() error {
	s, err := sqlite.Open(filepath.Join(o.opts.RunDir, AsideDir, "sessions.db"))
	if err != nil {
		return err
	}
	// The run dir is out of its tools' reach, as it is of the run's.
	rt, err := agent.New(agent.Options{Workspace: o.opts.Workspace, Provider: o.opts.Provider,
		Store: s, Retry: o.opts.Retry, Secrets: o.opts.Secrets, Permissions: o.opts.Permissions,
		ToolEnv: &builtin.Env{Workspace: o.opts.Workspace, Forbidden: []string{o.opts.RunDir}, Hidden: o.opts.Permissions.Hides}})
	if err != nil {
		s.Close()
		return err
	}
	o.rt, o.store = rt, s
	return nil
}

// Close waits for a question being answered, then releases the oracle's
// store. Ask fails afterwards.
func (o *Oracle) Close() error {
	o.turn <- struct{}{}
	defer func() { <-o.turn }()
	o.closed = true
	if o.store == nil {
		return nil
	}
	return o.store.Close()
}

const instructions = `You are the oracle of flower. An agent is working on a long task; the person who gave it the task asks you a side question about it, such as "how far along are you?" or "why did it choose X?". The working agent does not see this conversation and does not stop for it.

- You only read: use Read, Glob and Grep to look at the workspace and the workbench (.flower/notes). Never try to change anything.
- Base your answer on the recent events and notes given below, and on files you read. Do not guess: if you cannot tell, say so and say what would tell.
- Answer briefly and concretely, in the person's language: a few sentences or a short list. For progress, say what is done, what is under way and what comes next.`

// prompt is the question with the latest events and the notes.
func (o *Oracle) prompt(question string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The person asks: %s\n\n", question)
	o.mu.Lock()
	recent := slices.Clone(o.recent)
	o.mu.Unlock()
	fmt.Fprintf(&b, "## The run's latest events (oldest first, %d of them)\n\n", len(recent))
	if len(recent) == 0 {
		b.WriteString("(none yet)\n")
	}
	for _, e := range recent {
		b.WriteString(describe(e))
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n## The workbench notes (%s)\n", o.opts.Notes)
	b.WriteString(notes(o.opts.Notes))
	return b.String()
}

// describe is one event as a line: "- [step] kind: text".
func describe(e event.Event) string {
	var tags []string
	if s, ok := e.Payload["step"].(string); ok && s != "" {
		tags = append(tags, s)
	}
	if s, ok := e.Payload["subagent"].(string); ok && s != "" {
		tags = append(tags, "subagent "+s)
	}
	prefix := "- "
	if len(tags) > 0 {
		prefix += "[" + strings.Join(tags, ", ") + "] "
	}
	return prefix + string(e.Kind) + ": " + clip(e.String(), eventLimit)
}

// notes is the text of each Markdown note in the directory (not its
// archive), in name order, each and all bounded.
func notes(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "\n(no notes yet)\n"
	}
	var b strings.Builder
	total := 0
	for _, de := range entries {
		if de.IsDir() || !strings.HasSuffix(de.Name(), ".md") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			continue
		}
		text := string(data)
		limit := min(noteLimit, notesLimit-total)
		if limit <= 0 {
			fmt.Fprintf(&b, "\n### %s\n\n(not shown: read it if you need it)\n", de.Name())
			continue
		}
		if len(text) > limit {
			text = cut(text, limit) + "\n… (cut here: read the file for the rest)"
		}
		total += len(text)
		fmt.Fprintf(&b, "\n### %s\n\n%s\n", de.Name(), strings.TrimSpace(text))
	}
	if b.Len() == 0 {
		return "\n(no notes yet)\n"
	}
	return b.String()
}

// cut keeps at most n bytes of s, never splitting a character.
func cut(s string, n int) string {
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
