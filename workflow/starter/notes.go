package starter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow"
)

// Workbench paths, relative to the workspace.
const (
	WorkbenchDir = ".flower"
	BriefPath    = ".flower/notes/brief.md"
	GoalsPath    = ".flower/notes/goals.md"
	QAPath       = ".flower/notes/qa.md"
	ArchiveDir   = ".flower/notes/archive"
)

// BriefSections are the four sections a confirmed brief holds (R3.15).
var BriefSections = []string{"Goal", "Done when", "Constraints", "Unknowns and assumptions"}

// Brief is a parsed brief.md.
type Brief struct {
	Text     string
	Sections map[string]string // "##" heading -> body, trimmed
}

// ParseBrief reads the "## Heading" sections of a brief.
func ParseBrief(text string) Brief {
	b := Brief{Text: text, Sections: map[string]string{}}
	current, body := "", []string{}
	flush := func() {
		if current != "" {
			b.Sections[current] = strings.TrimSpace(strings.Join(body, "\n"))
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			flush()
			current, body = strings.TrimSpace(h), nil
			continue
		}
		body = append(body, line)
	}
	flush()
	return b
}

// Complete reports whether the brief has its four sections, each non-empty.
func (b Brief) Complete() bool {
	for _, s := range BriefSections {
		if b.Sections[s] == "" {
			return false
		}
	}
	return true
}

var checkLine = regexp.MustCompile(`(?m)^\s*[-*] \[[ xX]\] \S`)

// CountChecks is the number of checklist lines ("- [ ] ...") in goals.
func CountChecks(goals string) int { return len(checkLine.FindAllString(goals, -1)) }

// readNote returns a workspace note's text, or "" when it is missing or
// unreadable: notes are an extra and never block work.
func readNote(workspace, rel string) string {
	data, err := os.ReadFile(filepath.Join(workspace, rel))
	if err != nil {
		return ""
	}
	return string(data)
}

// maxNote bounds what notes gives of one note: a prompt carries the
// frozen notes, not a file that grew without bound.
const maxNote = 16 << 10

// notes returns the Context of a step that reads the frozen notes rels:
// their content as the step starts, each under its path (seed 000: a
// frozen step's output is poured into the later steps, not only named).
func notes(workspace string, rels ...string) func() string {
	return func() string {
		var b strings.Builder
		for _, rel := range rels {
			text := strings.TrimSpace(readNote(workspace, rel))
			if text == "" {
				continue
			}
			if len(text) > maxNote {
				text = text[:maxNote] + "\n[… cut at 16 KiB: read the file for the rest]"
			}
			fmt.Fprintf(&b, "%s, as it stands now:\n\n<%s>\n%s\n</%s>\n\n", rel, filepath.Base(rel), text, filepath.Base(rel))
		}
		return strings.TrimSpace(b.String())
	}
}

// State is what a wake would continue, read without writing anything (R3.6).
type State struct {
	Waking bool              // the brief exists and has its four sections
	Brief  string            // the brief's text
	Goal   string            // the brief's Goal section
	Added  []string          // the lines of the brief's "Added on wake", oldest first
	Checks int               // goal checks in goals.md
	Woke   int               // wakes so far
	Steps  map[string]string // step -> session
}

// WakeState probes a workspace and its thread in the store (nil: none
// yet). It writes nothing.
func WakeState(workspace string, s store.Store) State {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		ws = workspace
	}
	b := ParseBrief(readNote(ws, BriefPath))
	st := State{Waking: b.Complete(), Brief: b.Text, Goal: b.Sections["Goal"],
		Checks: CountChecks(readNote(ws, GoalsPath)), Steps: map[string]string{}}
	st.Added = addedLines(b.Text)
	if s != nil {
		if l, err := s.Lineage(context.Background(), ws); err == nil {
			st.Woke, st.Steps = l.Woke, l.Steps
		}
	}
	return st
}

// Archive ends the workspace's thread (R3.13): the lineage export, the
// brief and the goals move into ArchiveDir/<time>/, which it returns, and
// the store starts a new thread (see workflow.Archive).
func Archive(ctx context.Context, s store.Store, runDir, ws string, now time.Time) (into string, err error) {
	into = filepath.Join(ws, ArchiveDir, now.Format("20060102-150405"))
	if err := forgetNotes(ctx, s, ws); err != nil {
		return "", err
	}
	err = workflow.Archive(ctx, s, runDir, ws, into, now, filepath.Join(ws, BriefPath), filepath.Join(ws, GoalsPath))
	return into, err
}

// addedLines are the lines under every "## Added on wake" heading of a
// brief (AddOnWake writes one per wake), oldest first.
func addedLines(brief string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(brief, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Added on wake"
		case in && line != "":
			out = append(out, line)
		}
	}
	return out
}
