package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ReadFile is one configuration file flower reads for a workspace, and
// what it gives, for `flower status` (issue 21).
type ReadFile struct {
	Path string
	What string // "permission rules and hooks", "instructions", or the error
}

// FilesRead lists the configuration files that exist for workspace, in
// the order they are read: the user's config.yaml, flower.yaml, the
// Claude Code settings files, then the instruction files (imports after
// their importer). A bad settings file is listed with its error.
func FilesRead(workspace string) []ReadFile {
	var out []ReadFile
	for _, name := range []string{UserFile(), filepath.Join(workspace, FileName)} {
		if name != "" && exists(name) {
			out = append(out, ReadFile{Path: name, What: "settings"})
		}
	}
	for _, name := range ClaudeFiles(workspace) {
		if !exists(name) {
			continue
		}
		data, err := os.ReadFile(name)
		var s ClaudeSettings
		if err == nil {
			err = s.add(workspace, name, data)
		}
		if err != nil {
			out = append(out, ReadFile{Path: name, What: "error, runs refuse to start: " + err.Error()})
			continue
		}
		out = append(out, ReadFile{Path: name, What: fmt.Sprintf("Claude Code settings: %d rules, %d hooks, %d env",
			len(s.Allow)+len(s.Ask)+len(s.Deny), s.Hooks.Count(), len(s.Env))})
	}
	if agents, err := LoadSubagents(workspace); err != nil {
		out = append(out, ReadFile{Path: filepath.Join(workspace, ClaudeDir, "agents"), What: "error, runs refuse to start: " + err.Error()})
	} else {
		for _, a := range agents {
			out = append(out, ReadFile{Path: a.Path, What: "subagent " + a.Name})
		}
	}
	if cmds, err := LoadCommands(workspace); err != nil {
		out = append(out, ReadFile{Path: filepath.Join(workspace, ClaudeDir, "commands"), What: "error, slash commands unusable: " + err.Error()})
	} else {
		for _, c := range cmds {
			out = append(out, ReadFile{Path: c.Path, What: "slash command /" + c.Name})
		}
	}
	for _, in := range Instructions(workspace) {
		what := "instructions"
		if in.From != "" {
			what = "instructions, imported by " + in.From
		}
		out = append(out, ReadFile{Path: in.Path, What: what})
	}
	return out
}

func exists(name string) bool {
	_, err := os.Stat(name)
	return !errors.Is(err, fs.ErrNotExist)
}
