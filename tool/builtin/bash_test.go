//go:build unix

package builtin

import (
	"encoding/json"
	"os"
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

// TestBashEnvHasNoKeys: Bash's environment is an allow list (issue 20
// item 4): the base variables and flower.yaml's env, never a credential,
// flower's settings or the store's, whatever the allow list says.
func TestBashEnvHasNoKeys(t *testing.T) {
	for k, v := range map[string]string{
		"ANTHROPIC_API_KEY": "sk-ant-secret", "OPENAI_API_KEY": "sk-secret", "ANTHROPIC_AUTH_TOKEN": "tok-secret",
		"FLOWER_TOKEN": "ftok-secret", "FLOWER_STORE": "postgres://u:pw-secret@db/x", "DATABASE_URL": "postgres://app:db-secret@h/d",
		"GITHUB_TOKEN": "ghp_secret", "MY_SERVICE_PASSWORD": "pw-secret", "AWS_SECRET_ACCESS_KEY": "aws-secret",
		"FLOWER_HARMLESS": "no", "UNLISTED_VAR": "no", "LC_ALL": "C.UTF-8", "GOFLAGS": "-mod=mod", "DOCS_URL": "https://go.dev/doc",
	} {
		t.Setenv(k, v)
	}
	env := testEnv(t)
	env.Environ = tool.EnvPolicy{Allow: []string{"GO*", "*_URL", "GITHUB_*", "FLOWER_*"}, Set: map[string]string{"NODE_ENV": "test"}}.Environ(os.Environ())
	res := run(t, &Bash{Env: env}, map[string]any{"command": "env"})
	for _, want := range []string{"LC_ALL=C.UTF-8", "GOFLAGS=-mod=mod", "DOCS_URL=https://go.dev/doc", "NODE_ENV=test", "PATH="} {
		wantOK(t, res, want)
	}
	for _, leak := range []string{"secret", "FLOWER_", "UNLISTED_VAR", "GITHUB_TOKEN", "DATABASE_URL", "PASSWORD"} {
		if strings.Contains(res.Content, leak) {
			t.Errorf("%s reached the command's environment:\n%s", leak, res.Content)
		}
	}
	res = run(t, &Bash{Env: testEnv(t)}, map[string]any{"command": "env"}) // the default: the base list only
	if strings.Contains(res.Content, "GOFLAGS") || strings.Contains(res.Content, "secret") || !strings.Contains(res.Content, "LC_ALL=") {
		t.Errorf("default environment:\n%s", res.Content)
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
