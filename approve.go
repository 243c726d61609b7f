package flower

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// Configuration the agent could have written needs a person (issue 20
// item 2), as direnv's allow: the workspace files below change what flower
// enforces (the sandbox, the permission rules, the MCP servers it starts),
// and the agent can write its workspace. So a start applies them only
// when their content is what a person last approved for this workspace;
// a change is shown as a diff and confirmed on a terminal (ConfirmConfig
// with a Confirmer), and refused with one line when no one is there
// (LoadConfig, for flower once, workers, flower serve, --timeout 0).
//
// The approved content lives in the state directory
// ($XDG_STATE_HOME/flower/approved), outside the workspace, where neither
// the sandbox nor the file tools let the agent write.
//
// The first start in a workspace (no approval recorded) approves what is
// there without asking: no agent of flower has run there yet, so the files
// are the person's, or those of a project they chose to run flower in,
// as with make or npm install; direnv asks even then, but a person who
// typed flower "task" in that directory has made that choice. Every
// later change, by anyone, is confirmed.

// ConfirmedFiles are the workspace files whose content a person approves.
var ConfirmedFiles = []string{"flower.yaml", ".mcp.json", ".claude/settings.json", ".claude/settings.local.json"}

// ErrNotApproved is wrapped by the refusal of a changed config.
var ErrNotApproved = errors.New("not approved")

// Confirmer shows a person the diff of the changed files and reports
// whether they approve it.
type Confirmer func(diff string) (bool, error)

// approval is the record of what a person approved: each file's content,
// nil for a file that did not exist.
type approval struct {
	Workspace string             `json:"workspace"`
	Files     map[string]*string `json:"files"`
}

// ApprovedDir is where approvals are kept: file tools must not reach it.
func ApprovedDir() (string, error) {
	home, err := StateHome()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "flower", "approved"), nil
}

func approvalFile(ws string) (string, error) {
	dir, err := ApprovedDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, RunDirName(ws)+".json"), nil
}

// current reads the confirmed files of ws as they are.
func current(ws string) (map[string]*string, error) {
	files := map[string]*string{}
	for _, name := range ConfirmedFiles {
		b, err := os.ReadFile(filepath.Join(ws, filepath.FromSlash(name)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			files[name] = nil
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", name, err)
		default:
			s := string(b)
			files[name] = &s
		}
	}
	return files, nil
}

// ConfigChanges returns the names of the confirmed files of ws that differ
// from what was approved, and their unified diff; none on the first start
// (which records what is there).
func ConfigChanges(ws string) (names []string, diff string, err error) {
	path, err := approvalFile(ws)
	if err != nil {
		return nil, "", err
	}
	now, err := current(ws)
	if err != nil {
		return nil, "", err
	}
	var old approval
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, "", record(path, ws, now)
	case err != nil:
		return nil, "", approvalErr(path, "read", err)
	}
	if err := json.Unmarshal(b, &old); err != nil {
		return nil, "", fmt.Errorf("the approved config %s is damaged (%v): delete it and approve again with flower allow", path, err)
	}
	var d strings.Builder
	for _, name := range ConfirmedFiles {
		was, is := text(old.Files[name]), text(now[name])
		if was == is && (old.Files[name] == nil) == (now[name] == nil) {
			continue
		}
		names = append(names, name)
		d.WriteString(udiff.Unified("approved/"+name, name, was, is))
	}
	return names, d.String(), nil
}

func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ApproveConfig records the confirmed files of ws as they are now.
func ApproveConfig(ws string) error {
	path, err := approvalFile(ws)
	if err != nil {
		return err
	}
	now, err := current(ws)
	if err != nil {
		return err
	}
	return record(path, ws, now)
}

// record writes the approval atomically (temp file, fsync, rename).
func record(path, ws string, files map[string]*string) error {
	b, err := json.MarshalIndent(approval{Workspace: ws, Files: files}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return approvalErr(path, "record", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".approve-*")
	if err != nil {
		return approvalErr(path, "record", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil { // the rename itself durable (DESIGN §3)
		if d, derr := os.Open(filepath.Dir(path)); derr == nil {
			err = d.Sync()
			d.Close()
		}
	}
	if err != nil {
		return approvalErr(path, "record", err)
	}
	return nil
}

// approvalErr says that the approval at path could not be read or
// written, and, for a disk that is full or not writable, what moves it:
// only XDG_STATE_HOME, since approvals stay in the state dir whatever
// --run-dir says (issue 23).
func approvalErr(path, verb string, err error) error {
	err = fmt.Errorf("%s the approved config: %w", verb, err)
	if fix := storageFix(err, filepath.Dir(path), "keep flower's state elsewhere with XDG_STATE_HOME=DIR"); fix != "" {
		return fmt.Errorf("%w: %s", err, fix)
	}
	return err
}

// ConfirmConfig applies the rule above at a start in ws: nil when the
// confirmed files are as approved (or this is the first start); else,
// with confirm, the diff is shown and a yes records the new content; with
// confirm nil (no one at a terminal), or a no, a *UsageError of one line
// naming the files and the command that approves them.
func ConfirmConfig(ws string, confirm Confirmer) error {
	names, diff, err := ConfigChanges(ws)
	if err != nil || len(names) == 0 {
		return err
	}
	what := strings.Join(names, ", ")
	if confirm != nil {
		ok, err := confirm(diff)
		if err != nil {
			return err
		}
		if ok {
			return ApproveConfig(ws)
		}
		return &UsageError{Err: fmt.Errorf("%s: %w: the changes were declined; undo them, or approve them with: flower allow --workspace %s", what, ErrNotApproved, ws)}
	}
	return &UsageError{Err: fmt.Errorf("%s changed since a person last approved this workspace's config, and no one is at a terminal to confirm it (%w); review and approve it with: flower allow --workspace %s", what, ErrNotApproved, ws)}
}
