//go:build unix

package builtin

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/flower-run/flower/tool"
)

func TestBash(t *testing.T) {
	env := testEnv(t)
	writeFile(t, env.Workspace, "here.txt", "")
	tests := []struct {
		name, command string
		want          string
		wantError     bool
	}{
		{"stdout", "echo hello", "hello\n", false},
		{"stdout and stderr", "echo out; echo err >&2", "out\nerr\n", false},
		{"runs in workspace", "ls", "here.txt\n", false},
		{"no output", "true", "(no output)", false},
		{"bash syntax", "a=(x y); echo ${#a[@]}", "2\n", false},
		{"exit code", "echo failing; exit 3", "Exit code 3\nfailing\n", true},
		{"command not found", "definitely-not-a-command-xyz", "Exit code 127\n", true},
		{"stdin is empty", "cat", "(no output)", false},
		{"killed by a signal", "kill -9 $$", killedText, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, &Bash{Env: env}, map[string]any{"command": tt.command})
			if res.IsError != tt.wantError || !strings.HasPrefix(res.Content, tt.want) {
				t.Errorf("got (error=%v) %q, want (error=%v) prefix %q", res.IsError, res.Content, tt.wantError, tt.want)
			}
		})
	}
}

func TestBashOutputCap(t *testing.T) {
	env := testEnv(t)
	env.OutputCap = 100
	res := run(t, &Bash{Env: env}, map[string]any{"command": "echo BEGIN; for i in $(seq 1000); do echo line$i; done; echo END"})
	wantOK(t, res, "BEGIN\n", "bytes cut", "END\n")
	if len(res.Content) > 150 {
		t.Errorf("output is %d bytes, want about 100", len(res.Content))
	}
}

func TestBashEnvHasNoKeys(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
	t.Setenv("OPENAI_API_KEY", "sk-secret")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok")
	t.Setenv("FLOWER_TOKEN", "ftok")
	t.Setenv("FLOWER_HARMLESS", "kept")
	res := run(t, &Bash{Env: testEnv(t)}, map[string]any{"command": "env"})
	wantOK(t, res, "FLOWER_HARMLESS=kept")
	for _, k := range tool.SecretEnv {
		if strings.Contains(res.Content, k) {
			t.Errorf("%s reached the command's environment", k)
		}
	}
	if strings.Contains(res.Content, "secret") {
		t.Errorf("a key value reached the command's environment")
	}
}

func TestBashTimeoutClamp(t *testing.T) {
	env := Env{BashTimeout: time.Second, BashMaxTimeout: time.Minute}.withDefaults()
	tests := []struct {
		ms   int
		want time.Duration
	}{
		{0, time.Second},
		{-5, time.Second},
		{1500, 1500 * time.Millisecond},
		{10 * 60 * 1000, time.Minute},
	}
	for _, tt := range tests {
		if got := (bashInput{Timeout: flexInt(tt.ms)}).timeout(env); got != tt.want {
			t.Errorf("timeout(%d) = %v, want %v", tt.ms, got, tt.want)
		}
	}
}

func TestBashDescriptionShowsLimits(t *testing.T) {
	b := &Bash{Env: Env{BashTimeout: 5 * time.Second, BashMaxTimeout: 9 * time.Second, OutputCap: 1234}}
	wantContains(t, b.Description(), "default 5000", "at most 9000", "1234 bytes")
	wantContains(t, string(b.Schema()), `"maximum": 9000`)
	if !json.Valid(b.Schema()) {
		t.Errorf("schema is not valid JSON")
	}
}
