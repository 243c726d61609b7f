package flower

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flower-run/flower/internal/atomicfile"
	"github.com/flower-run/flower/project"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
	"github.com/flower-run/flower/workflow"
	"github.com/flower-run/flower/workflow/starter"
)

// Finding is one line of flower doctor (issue 22 item 2): what was
// checked, what was found, and when it is not fine, what to do.
type Finding struct {
	Check string
	OK    bool
	Text  string
	Fix   string
}

// restoreFix is what recovers a damaged SQLite store.
const restoreFix = "restore sessions.db (with its -wal) from a backup, or start this workspace over with flower --reset"

// Doctor checks the state of workspace ws (absolute) kept in runDir, or
// at url (PostgreSQL): that the store opens, SQLite's quick_check, the
// high-water mark (workflow.CheckMark), temp files killed writes left,
// and the project id's binding (package project). It reads only and
// takes no lock, so it may run beside a flower that works here.
//
// A project moved here and not yet adopted is checked where its state
// is: the old path's run dir (when runDir is the one the new path
// names) and the old path's records.
func Doctor(ctx context.Context, ws, runDir, url string) []Finding {
	id, f := doctorProject(ws)
	storeWS := ws
	if f.Kind == project.Moved {
		storeWS = f.From
		if home, err := StateHome(); err == nil && SameDir(runDir, pathRunDir(home, ws)) {
			runDir = f.Entry.RunDir
		}
	}
	s, err := ReadStore(ctx, runDir, url)
	if err != nil {
		fix := StorageFix(err, runDir)
		if fix == "" {
			fix = restoreFix
		}
		return []Finding{{Check: "store", Text: err.Error(), Fix: fix}, doctorTemp(ws, runDir), id}
	}
	var out []Finding
	if s == nil {
		out = append(out, Finding{Check: "store", OK: true, Text: "none yet in " + Tilde(runDir) + ": nothing has been stored here"})
	} else {
		defer s.Close()
		out = append(out, Finding{Check: "store", OK: true, Text: "opens (" + storeName(runDir, url) + ")"})
		if url == "" {
			out = append(out, doctorSQLite(ctx, filepath.Join(runDir, StoreFile)), doctorMark(ctx, s, runDir, storeWS, f.Resumed))
		}
	}
	return append(out, doctorTemp(ws, runDir), id)
}

func storeName(runDir, url string) string {
	if url != "" {
		return "PostgreSQL"
	}
	return Tilde(filepath.Join(runDir, StoreFile))
}

// doctorSQLite is SQLite's quick_check of the store file.
func doctorSQLite(ctx context.Context, path string) Finding {
	problems, err := sqlite.Check(ctx, path, true)
	switch {
	case err != nil:
		return Finding{Check: "quick_check", Text: err.Error(), Fix: restoreFix}
	case len(problems) > 0:
		text := problems[0]
		if len(problems) > 1 {
			text += fmt.Sprintf(" (and %d more)", len(problems)-1)
		}
		return Finding{Check: "quick_check", Text: "the file is damaged: " + text, Fix: restoreFix}
	}
	return Finding{Check: "quick_check", OK: true, Text: "ok"}
}

// doctorMark compares the store with its high-water mark.
func doctorMark(ctx context.Context, s store.Store, runDir, ws string, halfMoved bool) Finding {
	if halfMoved { // the records and the mark may name either path until the adoption ends
		return Finding{Check: "high-water", OK: true, Text: "not checked: a move's adoption is half done (the next start finishes it, then checks)"}
	}
	err := workflow.CheckMark(ctx, s, runDir, ws)
	var damage *workflow.DamageError
	switch {
	case errors.As(err, &damage):
		return Finding{Check: "high-water", Text: "the store lost records it had committed: " + strings.Join(damage.Missing, "; "), Fix: restoreFix}
	case err != nil:
		return Finding{Check: "high-water", Text: err.Error(), Fix: "see that " + Tilde(runDir) + " is readable"}
	}
	return Finding{Check: "high-water", OK: true, Text: "the store holds all it held at its last export"}
}

// doctorTemp reports the temp files of killed writes.
func doctorTemp(ws, runDir string) Finding {
	var left []string
	for _, name := range atomicfile.Leftovers(runDir) {
		left = append(left, Tilde(filepath.Join(runDir, name)))
	}
	bench := filepath.Join(ws, starter.WorkbenchDir)
	for _, rel := range atomicfile.LeftoversTree(bench) {
		left = append(left, Tilde(filepath.Join(bench, rel)))
	}
	for _, name := range sqlite.Builds(filepath.Join(runDir, StoreFile)) {
		left = append(left, Tilde(filepath.Join(runDir, name)))
	}
	temp := Finding{Check: "temp files", OK: true, Text: "none left by killed writes"}
	if len(left) > 0 {
		temp = Finding{Check: "temp files", Text: fmt.Sprintf("%d left by killed writes: %s", len(left), strings.Join(left, ", ")),
			Fix: "harmless; the next flower start here removes them"}
	}
	return temp
}

// doctorProject says how the project's id is bound (package project),
// and what Look found.
func doctorProject(ws string) (Finding, project.Found) {
	home, err := StateHome()
	if err != nil {
		return Finding{Check: "project id", Text: err.Error(), Fix: "set XDG_STATE_HOME or HOME"}, project.Found{}
	}
	f, err := project.IndexIn(home).Look(ws)
	if err != nil {
		return Finding{Check: "project id", Text: err.Error()}, f // its text says what to do
	}
	no := func(text, fix string) (Finding, project.Found) {
		return Finding{Check: "project id", Text: text, Fix: fix}, f
	}
	switch f.Kind {
	case project.None:
		return Finding{Check: "project id", OK: true, Text: "none yet: the first stored run here makes one"}, f
	case project.Unbound:
		return no(f.ID+" is not in the project index", "the next flower start here binds it to this directory")
	case project.Copied:
		return no(fmt.Sprintf("%s is also %s's, which is still there: this directory is a copy", f.ID, Tilde(f.From)),
			"the next flower start here gives it an id and state of its own")
	case project.Moved:
		what := "moved here from " + Tilde(f.From)
		if f.Resumed {
			what += ", its adoption half done"
		}
		return no(f.ID+": "+what+" (state in "+Tilde(f.Entry.RunDir)+")", "the next flower start here adopts that state (asking first at a terminal)")
	}
	return Finding{Check: "project id", OK: true, Text: f.ID + ", bound here (state in " + Tilde(f.Entry.RunDir) + ")"}, f
}
