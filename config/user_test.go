package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// userConfig points UserDir at a fresh directory holding config.yaml
// with data ("" writes none) and returns the file's path.
func userConfig(t *testing.T, data string) string {
	t.Helper()
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	name := filepath.Join(xdg, "flower", UserFileName)
	if data != "" {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, name, data)
	}
	return name
}

func TestUserDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	if got, want := UserDir(), filepath.Join(home, ".config", "flower"); got != want {
		t.Errorf("UserDir without XDG_CONFIG_HOME = %s, want %s", got, want)
	}
	t.Setenv("XDG_CONFIG_HOME", "relative/ignored") // the XDG spec: relative paths are invalid
	if got, want := UserDir(), filepath.Join(home, ".config", "flower"); got != want {
		t.Errorf("UserDir with a relative XDG_CONFIG_HOME = %s, want %s", got, want)
	}
	t.Setenv("XDG_CONFIG_HOME", "/x/conf")
	if got, want := UserFile(), "/x/conf/flower/config.yaml"; got != want {
		t.Errorf("UserFile = %s, want %s", got, want)
	}
}

// TestLoadMergesUserAndWorkspace: the workspace's flower.yaml overrides
// the user's config.yaml key by key; what it leaves out keeps the user's
// value (R10.2).
func TestLoadMergesUserAndWorkspace(t *testing.T) {
	userConfig(t, "model:\n  name: claude-user\ntimeout: 60\nmax_turns: 7\nresume:\n  default: skip\n  per_tool:\n    Bash: discard\n")
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, FileName), "model: {name: claude-ws}\nresume:\n  per_step:\n    publish: discard\n")
	got, err := Load(ws)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	timeout, turns := 60.0, 7
	want := Config{Resume: Resume{Default: Skip, PerTool: map[string]Policy{"Bash": Discard},
		PerStep: map[string]Policy{"publish": Discard}},
		Model: ModelSettings{Name: "claude-ws"}, Timeout: &timeout, MaxTurns: &turns}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load mismatch (-want +got):\n%s", diff)
	}

	// Without a workspace file, the user's file alone.
	got, err = Load(t.TempDir())
	if err != nil || got.Model.Name != "claude-user" || got.PolicyFor("x", "Bash") != Discard {
		t.Errorf("Load without flower.yaml = %+v, %v; want the user's settings", got, err)
	}
}

func TestLoadUserErrorNamesTheUserFile(t *testing.T) {
	name := userConfig(t, "modle: x\n")
	_, err := Load(t.TempDir())
	want := name + ":1:1: modle: unknown key (use resume, " // more keys may follow
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Load error\ngot  %v\nwant %s", err, want)
	}
}

// TestFlagDefaults: the files' defaults of the CLI's flags, as the flags
// parse them; $FLOWER_MODEL wins over model.name; unset keys are absent
// (R10.2; moved from cmd/flower, issue 19).
func TestFlagDefaults(t *testing.T) {
	t.Setenv("FLOWER_MODEL", "")
	turns, budget := 7, 0.5
	c := Config{MaxTurns: &turns, Budget: &budget}
	c.Model.Name = "claude-x"
	got := c.FlagDefaults()
	want := map[string]string{"model": "claude-x", "max-turns": "7", "budget": "0.5"}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	t.Setenv("FLOWER_MODEL", "other")
	if _, ok := c.FlagDefaults()["model"]; ok {
		t.Error("model.name won over $FLOWER_MODEL")
	}
	for _, k := range DefaultFlags {
		if k != "model" && k != "max-turns" && k != "budget" && got[k] != "" {
			t.Errorf("%s set: %q", k, got[k])
		}
	}
}
