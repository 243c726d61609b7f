package flower

import (
	"context"
	"strings"
	"time"

	"github.com/flower-run/flower/store"
)

// SessionRow is one line of flower sessions: what a person needs to find a
// session again (issue 23).
type SessionRow struct {
	ID      string    `json:"id"`
	Step    string    `json:"step"` // the agent's step, "" for flower once
	Started time.Time `json:"started"`
	Turns   int       `json:"turns"`
	Cost    float64   `json:"cost_usd"`
	// Status is ok or failed for a step that has its result, else ok when
	// the model ended its last turn and open when the session was cut.
	Status string `json:"status"`
	Task   string `json:"task"` // the person's task or prompt, one line
}

// SessionRows lists ws's sessions, oldest first, reading only what a row
// shows: a long session's tool results stay unread.
func SessionRows(ctx context.Context, s store.Store, ws string) ([]SessionRow, error) {
	metas, err := Sessions(ctx, s, ws, "")
	if err != nil {
		return nil, err
	}
	results, err := s.Results(ctx, "")
	if err != nil {
		return nil, err
	}
	tasks, err := runTasks(ctx, s, ws)
	if err != nil {
		return nil, err
	}
	okBySession, taskBySession := map[string]bool{}, map[string]string{}
	for _, r := range results {
		okBySession[r.SessionID] = r.OK
		if t := tasks[r.Run]; t != "" {
			taskBySession[r.SessionID] = t
		}
	}
	rows := make([]SessionRow, 0, len(metas))
	for _, m := range metas {
		st, err := store.ReadStats(ctx, s, m.Key)
		if err != nil {
			return nil, err
		}
		id := SessionID(ws, m.Key)
		row := SessionRow{ID: id, Step: m.Agent, Started: m.Created, Turns: st.Turns, Cost: st.Cost,
			Task: TaskLine(st.Prompt), Status: "open"}
		if t := taskBySession[id]; t != "" {
			row.Task = t // a step's prompt is flower's instruction; the person's task is the run's
		}
		if ok, done := okBySession[id]; done {
			row.Status = map[bool]string{true: "ok", false: "failed"}[ok]
		} else if st.LastStop == "end_turn" {
			row.Status = "ok"
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// runTasks maps the id of each run of ws to the person's words that
// started it: the phrase a wake added, else the task; one line.
func runTasks(ctx context.Context, s store.Store, ws string) (map[string]string, error) {
	runs, err := s.Runs(ctx, ws)
	if err != nil {
		return nil, err
	}
	tasks := make(map[string]string, len(runs))
	for _, r := range runs {
		words := r.Task
		if strings.TrimSpace(r.Phrase) != "" {
			words = r.Phrase
		}
		tasks[r.ID] = TaskLine(words)
	}
	return tasks, nil
}

// TaskLine is the line of a prompt that says what was asked: a step's
// prompt opens with a heading such as "The task, in the person's words:",
// which says nothing, so the first line after it is taken.
func TaskLine(prompt string) string {
	paras := strings.Split(strings.TrimSpace(prompt), "\n\n")
	for i, p := range paras {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		first, _, _ := strings.Cut(p, "\n")
		if strings.HasSuffix(first, ":") && !strings.Contains(p, "\n") && i+1 < len(paras) {
			continue // a heading alone in its paragraph
		}
		return strings.TrimSpace(first)
	}
	return ""
}
