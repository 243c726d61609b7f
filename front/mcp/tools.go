package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/flower-run/flower/human"
)

// The tools' descriptions: what a client's model reads to use them.
const (
	startDesc = "Start flower on a task in a directory: it clarifies the task (it may ask you questions), sets checkable goals, " +
		"does the work and has a fresh judge verify it, durable across crashes. Without a task it continues the work in " +
		"flight there. Returns at once; follow the task with task_status and task_events, answer its questions with " +
		"task_answer. "
	// What becomes of the task when the session ends, as this server runs
	// tasks.
	detachedDesc = "The task runs in a process of its own and goes on when your session ends; a later session " +
		"follows and steers it with the same tools. With stop_with_client it runs inside this MCP server instead and " +
		"stops at its next message boundary when your session ends. Nothing is lost either way: a stopped task " +
		"continues with task_start again without a task (or flower in that directory)."
	inProcessDesc = "The task runs inside this MCP server: when your session with it ends (the client exits), the task " +
		"stops at its next message boundary and says so; nothing is lost, and task_start again (or running flower in " +
		"that directory) continues it where it stopped."
	statusDesc = "The state of the task in a directory: running, waiting (a question waits for task_answer), passed, " +
		"failed or stopped (task_start continues it); its run, step, questions waiting with their ids and options, " +
		"cost and turns."
	eventsDesc = "The task's events after seq `after` (0: from the start): what the agent says and does, its questions, " +
		"steps and result. Streaming deltas and usage records are left out unless all is true. wait_s waits up to that " +
		"many seconds (at most 60) for the next event or the end; kinds keeps only those kinds, limit caps the count. " +
		"Pass `last` as `after` next time."
	answerDesc    = "Answer a question the task asked (its id from task_status, e.g. q1); a number picks that option."
	noteDesc      = "Send a note to the running agent's inbox; it reads it at its next step, and later steps see it in the brief."
	interruptDesc = "Interrupt the running task at its next message boundary (a running tool finishes first). Without text " +
		"it stops (task_start continues it later); with text it continues with that text as your message."
)

type dirIn struct {
	Directory string `json:"directory" jsonschema:"absolute path of the task's directory (its workspace)"`
}

type startIn struct {
	Directory      string `json:"directory" jsonschema:"absolute path of the directory to work in; created if missing"`
	Task           string `json:"task,omitempty" jsonschema:"what to do; empty continues the work in flight there"`
	StopWithClient bool   `json:"stop_with_client,omitempty" jsonschema:"run the task inside this MCP server, so that it stops at its next message boundary when your session ends (default: it goes on)"`
}

type eventsIn struct {
	Directory string   `json:"directory" jsonschema:"absolute path of the task's directory"`
	After     int      `json:"after,omitempty" jsonschema:"the last seq you have (0: from the start)"`
	WaitS     float64  `json:"wait_s,omitempty" jsonschema:"wait up to this many seconds for a new event or the end of the task (at most 60)"`
	All       bool     `json:"all,omitempty" jsonschema:"also the streaming deltas and usage records, texts and payloads whole"`
	Kinds     []string `json:"kinds,omitempty" jsonschema:"only events of these kinds, e.g. [\"ask\",\"result\"]; naming delta or usage shows them"`
	Limit     int      `json:"limit,omitempty" jsonschema:"at most this many events (default and most: 200); more says there are others"`
}

type answerIn struct {
	Directory string `json:"directory" jsonschema:"absolute path of the task's directory"`
	ID        string `json:"id" jsonschema:"the question's id, e.g. q1 (see task_status)"`
	Text      string `json:"text" jsonschema:"the answer, or the number of an option"`
}

type textIn struct {
	Directory string `json:"directory" jsonschema:"absolute path of the task's directory"`
	Text      string `json:"text,omitempty" jsonschema:"the text for the agent"`
}

// Done is the structured answer of the tools that act.
type Done struct {
	OK bool `json:"ok"`
}

func (s *Server) addTools() {
	act := &sdk.ToolAnnotations{}
	read := &sdk.ToolAnnotations{ReadOnlyHint: true}
	start := startDesc + inProcessDesc
	if s.detaches() {
		start = startDesc + detachedDesc
	}
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "task_start", Annotations: act, Description: start}, s.startTool)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "task_status", Annotations: read, Description: statusDesc}, s.statusTool)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "task_events", Annotations: read, Description: eventsDesc}, s.eventsTool)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "task_answer", Annotations: act, Description: answerDesc}, s.answerTool)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "task_note", Annotations: act, Description: noteDesc}, s.noteTool)
	sdk.AddTool(s.mcp, &sdk.Tool{Name: "task_interrupt", Annotations: act, Description: interruptDesc}, s.interruptTool)
}

func text(format string, args ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func (s *Server) startTool(ctx context.Context, _ *sdk.CallToolRequest, in startIn) (*sdk.CallToolResult, Status, error) {
	dir, err := absDir(in.Directory)
	if err != nil {
		return nil, Status{}, err
	}
	task := strings.TrimSpace(in.Task)
	if !in.StopWithClient && s.detaches() {
		st, err := s.startDetached(ctx, dir, task)
		if err != nil {
			return nil, Status{}, err
		}
		if st.State == StatePassed {
			return text("%s", st.text()), st, nil
		}
		return text("started flower in %s in a process of its own (pid %d), which goes on when this session ends: "+
			"follow it with task_status and task_events (after %d: this task's events only)", dir, st.DriverPID, st.LastSeq), st, nil
	}
	t, err := s.start(ctx, dir, task)
	if err != nil {
		return nil, Status{}, err
	}
	st := t.status(ctx)
	if st.State == StatePassed {
		return text("%s", st.text()), st, nil
	}
	return text("started flower in %s: follow it with task_status and task_events; it stops when this session ends", dir), st, nil
}

// detaches reports whether task_start runs tasks in processes of their
// own.
func (s *Server) detaches() bool { return canDetach && len(s.opts.Command) > 0 && !s.steered }

func (s *Server) statusTool(ctx context.Context, _ *sdk.CallToolRequest, in dirIn) (*sdk.CallToolResult, Status, error) {
	t, x, err := s.get(in.Directory)
	if err != nil {
		return nil, Status{}, err
	}
	var st Status
	if t != nil {
		st = t.status(ctx)
	} else if st, err = x.status(ctx); err != nil {
		return nil, Status{}, err
	}
	return text("%s", st.text()), st, nil
}

func (s *Server) eventsTool(ctx context.Context, _ *sdk.CallToolRequest, in eventsIn) (*sdk.CallToolResult, Events, error) {
	t, x, err := s.get(in.Directory)
	if err != nil {
		return nil, Events{}, err
	}
	q, err := newQuery(in)
	if err != nil {
		return nil, Events{}, err
	}
	wait := time.Duration(in.WaitS * float64(time.Second))
	if t != nil {
		return nil, t.wait(ctx, q, wait), nil
	}
	evs, err := x.events(ctx, q, wait)
	return nil, evs, err
}

func (s *Server) answerTool(ctx context.Context, _ *sdk.CallToolRequest, in answerIn) (*sdk.CallToolResult, Done, error) {
	t, x, err := s.get(in.Directory)
	if err != nil {
		return nil, Done{}, err
	}
	if t == nil {
		if err := x.answer(ctx, in.ID, in.Text); err != nil {
			return nil, Done{}, err
		}
		return text("answered %s: the task reads it within a few seconds", in.ID), Done{OK: true}, nil
	}
	ch, err := t.channel()
	if err != nil {
		return nil, Done{}, err
	}
	answer := in.Text
	for _, a := range ch.Pending() {
		if a.ID == in.ID {
			answer = a.Pick(in.Text)
		}
	}
	if !ch.Answer(in.ID, answer) {
		return nil, Done{}, notWaiting(in.ID)
	}
	return text("answered %s: %s", in.ID, answer), Done{OK: true}, nil
}

func (s *Server) noteTool(ctx context.Context, _ *sdk.CallToolRequest, in textIn) (*sdk.CallToolResult, Done, error) {
	if strings.TrimSpace(in.Text) == "" {
		return nil, Done{}, fmt.Errorf("text is empty: write what the agent should read in its inbox")
	}
	t, x, err := s.get(in.Directory)
	if err != nil {
		return nil, Done{}, err
	}
	if t == nil {
		err = x.note(ctx, in.Text)
	} else {
		var ch *human.Channel
		if ch, err = t.channel(); err == nil {
			ch.Send(in.Text)
		}
	}
	if err != nil {
		return nil, Done{}, err
	}
	return text("sent: the agent reads it at its next step"), Done{OK: true}, nil
}

func (s *Server) interruptTool(ctx context.Context, _ *sdk.CallToolRequest, in textIn) (*sdk.CallToolResult, Done, error) {
	t, x, err := s.get(in.Directory)
	if err != nil {
		return nil, Done{}, err
	}
	msg := strings.TrimSpace(in.Text)
	if t == nil {
		err = x.interrupt(ctx, msg)
	} else {
		err = t.stop(msg)
	}
	if err != nil {
		return nil, Done{}, err
	}
	if msg == "" {
		return text("stopping at the next message boundary: task_status says when it stopped; task_start continues it"), Done{OK: true}, nil
	}
	return text("interrupting at the next message boundary: it continues with your text"), Done{OK: true}, nil
}
