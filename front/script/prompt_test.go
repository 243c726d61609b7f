package script

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower"
)

// TestPromptSources: flower once's prompt comes from the argument, -f
// FILE, "-" or a pipe; a bad source is a usage error of one line naming
// it (issue 11; moved from cmd/flower, issue 19).
func TestPromptSources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "task.md")
	if err := os.WriteFile(file, []byte("  from the file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.md")
	if err := os.WriteFile(empty, []byte(" \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args       []string
		file, in   string
		want, fail string
	}{
		{args: []string{"the argument"}, in: "ignored", want: "the argument"},
		{file: file, want: "from the file"},
		{args: []string{"-"}, in: "from stdin\n", want: "from stdin"},
		{in: "piped\n", want: "piped"},
		{in: "", want: ""}, // nothing piped: the caller asks for a prompt
		{args: []string{"x"}, file: file, fail: "not both"},
		{file: filepath.Join(dir, "missing"), fail: "-f " + filepath.Join(dir, "missing")},
		{file: empty, fail: "the prompt in " + empty + " is empty"},
		{args: []string{"-"}, in: strings.Repeat("x", MaxPrompt+1), fail: "is over 16 MiB"},
	} {
		got, err := Prompt(c.args, c.file, strings.NewReader(c.in))
		var ue *flower.UsageError
		switch {
		case c.fail == "" && (err != nil || got != c.want):
			t.Errorf("%v %q: %q, %v; want %q", c.args, c.file, got, err, c.want)
		case c.fail != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), c.fail) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%v %q: %v; want a one-line usage error with %q", c.args, c.file, err, c.fail)
		}
	}
}

// TestTask: flower [TASK]'s task is the phrase, -f FILE or "-".
func TestTask(t *testing.T) {
	file := filepath.Join(t.TempDir(), "task.md")
	if err := os.WriteFile(file, []byte("write the report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Task("", file, nil); err != nil || got != "write the report" {
		t.Errorf("-f: %q, %v", got, err)
	}
	if got, err := Task("-", "", strings.NewReader("from stdin")); err != nil || got != "from stdin" {
		t.Errorf("-: %q, %v", got, err)
	}
	if got, err := Task("a phrase", "", strings.NewReader("unread")); err != nil || got != "a phrase" {
		t.Errorf("phrase: %q, %v", got, err)
	}
	if _, err := Task("a phrase", file, nil); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("both: %v", err)
	}
}
