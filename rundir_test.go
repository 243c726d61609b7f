package flower_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/flower-run/flower"
)

// TestChooseRunDir takes $FLOWER_RUN_DIR relative to the caller's
// directory, and the default under the state directory without it.
func TestChooseRunDir(t *testing.T) {
	ws, state := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	for _, c := range []struct{ env, dir, want string }{
		{"runs", ws, filepath.Join(ws, "runs")},
		{"runs", "", "runs"},
		{"/srv/flower", ws, "/srv/flower"},
	} {
		t.Setenv(flower.RunDirEnv, c.env)
		if got, old, err := flower.ChooseRunDir(ws, c.dir); err != nil || old || got != c.want {
			t.Errorf("%s=%s from %q: %q, %v, %v; want %q", flower.RunDirEnv, c.env, c.dir, got, old, err, c.want)
		}
	}
	t.Setenv(flower.RunDirEnv, "")
	def, err := flower.DefaultRunDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	if got, old, err := flower.ChooseRunDir(ws, ws); err != nil || old || got != def || filepath.Dir(filepath.Dir(got)) != filepath.Join(state, "flower") {
		t.Errorf("no %s: %q, %v, %v; want %q under %s", flower.RunDirEnv, got, old, err, def, state)
	}
}

// TestRunDirNameTellsPathsApart: paths that read alike once made readable
// (/ _ . all become -) get run dirs of their own, in a worker's directory
// as in the state home; the same path always the same one.
func TestRunDirNameTellsPathsApart(t *testing.T) {
	alike := []string{"/srv/my-app", "/srv/my_app", "/srv/my/app", "/srv/my.app"}
	seen := map[string]string{}
	for _, ws := range alike {
		name := flower.RunDirName(ws)
		if other, ok := seen[name]; ok {
			t.Errorf("%s and %s share the run dir name %s", ws, other, name)
		}
		seen[name] = ws
		if again := flower.RunDirName(ws); again != name {
			t.Errorf("RunDirName(%s) is %s, then %s", ws, name, again)
		}
		if !strings.Contains(name, "srv-my") {
			t.Errorf("RunDirName(%s) = %s does not show the path", ws, name)
		}
	}
}
