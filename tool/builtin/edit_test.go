package builtin

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEdit(t *testing.T) {
	const src = "package main\n\nfunc a() { x := 1 }\nfunc b() { x := 1 }\nfunc c() {}\n"
	tests := []struct {
		name       string
		input      map[string]any
		wantFile   string
		wantResult []string
	}{
		{
			name:       "unique",
			input:      map[string]any{"old_string": "func c() {}", "new_string": "func c() { return }"},
			wantFile:   "package main\n\nfunc a() { x := 1 }\nfunc b() { x := 1 }\nfunc c() { return }\n",
			wantResult: []string{"Edited f.go: replaced 1 occurrence.", "     5\tfunc c() { return }\n", "     2\t\n"},
		},
		{
			name:       "replace all",
			input:      map[string]any{"old_string": "x := 1", "new_string": "y := 2", "replace_all": true},
			wantFile:   "package main\n\nfunc a() { y := 2 }\nfunc b() { y := 2 }\nfunc c() {}\n",
			wantResult: []string{"replaced 2 occurrences", "     3\tfunc a() { y := 2 }\n"},
		},
		{
			name:       "delete",
			input:      map[string]any{"old_string": "func c() {}\n", "new_string": ""},
			wantFile:   "package main\n\nfunc a() { x := 1 }\nfunc b() { x := 1 }\n",
			wantResult: []string{"replaced 1 occurrence"},
		},
		{
			name:       "multi-line",
			input:      map[string]any{"old_string": "func a() { x := 1 }\nfunc b()", "new_string": "func ab()"},
			wantFile:   "package main\n\nfunc ab() { x := 1 }\nfunc c() {}\n",
			wantResult: []string{"     3\tfunc ab() { x := 1 }\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t)
			p := writeFile(t, env.Workspace, "f.go", src)
			tt.input["file_path"] = "f.go"
			wantOK(t, run(t, &Edit{Env: env}, tt.input), tt.wantResult...)
			if got := readFile(t, p); got != tt.wantFile {
				t.Errorf("file =\n%q\nwant\n%q", got, tt.wantFile)
			}
			if left := tmpLeftovers(t, env.Workspace); len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
}

func TestEditErrors(t *testing.T) {
	const src = "a b a b a\n"
	tests := []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"ambiguous", map[string]any{"file_path": "f.txt", "old_string": "a", "new_string": "c"}, "old_string occurs 3 times in f.txt"},
		{"not found", map[string]any{"file_path": "f.txt", "old_string": "zzz", "new_string": "c"}, "old_string was not found in f.txt"},
		{"identical", map[string]any{"file_path": "f.txt", "old_string": "b", "new_string": "b"}, "identical"},
		{"empty old", map[string]any{"file_path": "f.txt", "old_string": "", "new_string": "b"}, "use Write"},
		{"missing file", map[string]any{"file_path": "nope.txt", "old_string": "a", "new_string": "b"}, "file does not exist: nope.txt"},
		{"directory", map[string]any{"file_path": "dir", "old_string": "a", "new_string": "b"}, "is a directory"},
		{"outside", map[string]any{"file_path": "../f.txt", "old_string": "a", "new_string": "b"}, "outside the workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t)
			p := writeFile(t, env.Workspace, "f.txt", src)
			writeFile(t, env.Workspace, "dir/x", "")
			wantError(t, run(t, &Edit{Env: env}, tt.input), tt.want)
			if got := readFile(t, p); got != src {
				t.Errorf("file changed on error: %q", got)
			}
		})
	}
}

func TestEditKeepsMode(t *testing.T) {
	env := testEnv(t)
	p := writeFile(t, env.Workspace, "run.sh", "echo old\n")
	if err := os.Chmod(p, 0o700); err != nil {
		t.Fatal(err)
	}
	wantOK(t, run(t, &Edit{Env: env}, map[string]any{"file_path": "run.sh", "old_string": "old", "new_string": "new"}))
	assertMode(t, p, 0o700)
	if got := readFile(t, filepath.Join(env.Workspace, "run.sh")); got != "echo new\n" {
		t.Errorf("file = %q", got)
	}
}
