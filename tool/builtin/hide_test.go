package builtin

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower/permission"
)

// TestSearchesHideWhatReadDenies: with Read(.env) denied and
// Read(secret/**) asked, Grep over the workspace prints neither their
// content nor their names, in any mode, and Glob does not list them
// (issue 20 item 5; R9.3).
func TestSearchesHideWhatReadDenies(t *testing.T) {
	env := testEnv(t)
	writeFile(t, env.Workspace, ".env", "API_KEY=hunter2-secret\n")
	writeFile(t, env.Workspace, "sub/.env", "API_KEY=hunter2-secret\n")
	writeFile(t, env.Workspace, "secret/key.txt", "API_KEY=hunter2-secret\n")
	writeFile(t, env.Workspace, "main.go", "// API_KEY is read from the environment\n")
	rules, err := permission.New(env.Workspace, nil, []string{"Read(secret/**)"}, []string{"Read(.env)"})
	if err != nil {
		t.Fatal(err)
	}
	env.Hidden = rules.Hides
	for _, mode := range []string{"files_with_matches", "content", "count"} {
		res := run(t, &Grep{Env: env}, map[string]any{"pattern": "API_KEY", "output_mode": mode})
		if res.IsError || !strings.Contains(res.Content, "main.go") {
			t.Fatalf("Grep %s: %+v", mode, res)
		}
		for _, leak := range []string{"hunter2", ".env", "secret"} {
			if strings.Contains(res.Content, leak) {
				t.Errorf("Grep %s shows %q:\n%s", mode, leak, res.Content)
			}
		}
	}
	res := run(t, &Grep{Env: env}, map[string]any{"pattern": "API", "path": "sub"})
	if strings.Contains(res.Content, ".env") {
		t.Errorf("Grep of sub shows sub/.env:\n%s", res.Content)
	}
	for _, pattern := range []string{"**", "**/.env", ".*", "secret/*"} {
		res := run(t, &Glob{Env: env}, map[string]any{"pattern": pattern})
		if strings.Contains(res.Content, ".env") || strings.Contains(res.Content, "secret") {
			t.Errorf("Glob %s lists a denied file:\n%s", pattern, res.Content)
		}
	}
	env.Hidden = nil // without rules, the same searches find them: the test can fail
	if res := run(t, &Grep{Env: env}, map[string]any{"pattern": "hunter2", "output_mode": "content"}); !strings.Contains(res.Content, ".env:1:API_KEY=hunter2") {
		t.Errorf("Grep without rules:\n%s", res.Content)
	}
}

// TestHomeExpands: Read ~/x reads x in the home directory, and is
// refused, naming that path, when file tools are confined to the
// workspace.
func TestHomeExpands(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeFile(t, home, ".ssh/id_rsa", "PRIVATE")
	env := testEnv(t)
	res := run(t, &Read{Env: env}, map[string]any{"file_path": "~/.ssh/id_rsa"})
	if !res.IsError || !strings.Contains(res.Content, "outside the workspace") {
		t.Errorf("confined Read ~/.ssh/id_rsa: %+v", res)
	}
	env.AllowOutside = true
	for _, p := range []string{"~/.ssh/id_rsa", "$HOME/.ssh/id_rsa", "${HOME}/.ssh/id_rsa"} {
		if res := run(t, &Read{Env: env}, map[string]any{"file_path": p}); res.IsError || !strings.Contains(res.Content, "PRIVATE") {
			t.Errorf("Read %s: %+v", p, res)
		}
	}
	if got := expandHome("a/~/b"); got != "a/~/b" {
		t.Errorf("expandHome(a/~/b) = %q", got)
	}
	if got := expandHome("~"); got != filepath.Clean(home) {
		t.Errorf("expandHome(~) = %q", got)
	}
}
