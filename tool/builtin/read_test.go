package builtin

import (
	"fmt"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	env := testEnv(t)
	ws := env.Workspace
	writeFile(t, ws, "three.txt", "one\ntwo\r\nthree")
	writeFile(t, ws, "empty.txt", "")
	writeFile(t, ws, "dir/x.txt", "x\n")
	writeFile(t, ws, "bin.dat", "ab\x00cd")
	writeFile(t, ws, "long.txt", strings.Repeat("é", MaxLineChars+10)+"\nnext\n")
	var many strings.Builder
	for i := 1; i <= DefaultReadLimit+5; i++ {
		fmt.Fprintf(&many, "line %d\n", i)
	}
	writeFile(t, ws, "many.txt", many.String())

	tests := []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"all", map[string]any{"file_path": "three.txt"}, "     1\tone\n     2\ttwo\n     3\tthree\n"},
		{"absolute", map[string]any{"file_path": ws + "/three.txt"}, "     1\tone\n     2\ttwo\n     3\tthree\n"},
		{"offset", map[string]any{"file_path": "three.txt", "offset": 2}, "     2\ttwo\n     3\tthree\n"},
		{"limit", map[string]any{"file_path": "three.txt", "limit": 1}, "     1\tone\n\n(more lines follow; pass offset=2 to continue)"},
		{"window", map[string]any{"file_path": "three.txt", "offset": 2, "limit": 1}, "     2\ttwo\n\n(more lines follow; pass offset=3 to continue)"},
		{"empty", map[string]any{"file_path": "empty.txt"}, "(empty.txt is empty)"},
		{"past end", map[string]any{"file_path": "three.txt", "offset": 9}, "(three.txt has only 3 lines; offset 9 is past the end)"},
		{"long line", map[string]any{"file_path": "long.txt"},
			"     1\t" + strings.Repeat("é", MaxLineChars) + " … [line cut]\n     2\tnext\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, &Read{Env: env}, tt.input)
			if res.IsError || res.Content != tt.want {
				t.Errorf("got (error=%v)\n%q\nwant\n%q", res.IsError, res.Content, tt.want)
			}
		})
	}
	t.Run("default limit", func(t *testing.T) {
		res := run(t, &Read{Env: env}, map[string]any{"file_path": "many.txt"})
		wantOK(t, res, "  2000\tline 2000\n", fmt.Sprintf("pass offset=%d", DefaultReadLimit+1))
		if strings.Contains(res.Content, "line 2001") {
			t.Errorf("read past the default limit")
		}
	})
}

func TestReadErrors(t *testing.T) {
	env := testEnv(t)
	writeFile(t, env.Workspace, "dir/x.txt", "x\n")
	writeFile(t, env.Workspace, "bin.dat", "ab\x00cd")
	tests := []struct {
		name  string
		input map[string]any
		want  string
	}{
		{"missing", map[string]any{"file_path": "nope.txt"}, "file does not exist: nope.txt"},
		{"directory", map[string]any{"file_path": "dir"}, "dir is a directory"},
		{"binary", map[string]any{"file_path": "bin.dat"}, "bin.dat is a binary file"},
		{"negative offset", map[string]any{"file_path": "dir/x.txt", "offset": -1}, "must not be negative"},
		{"outside", map[string]any{"file_path": "../x"}, "outside the workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantError(t, run(t, &Read{Env: env}, tt.input), tt.want)
		})
	}
}
