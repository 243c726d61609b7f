package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/tool"
)

// lines collects what a Set reports.
type lines struct {
	mu  sync.Mutex // guards got
	got []string
}

func (l *lines) add(s string) { l.mu.Lock(); l.got = append(l.got, s); l.mu.Unlock() }

func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

func startSet(t *testing.T, ws string, servers ...Server) (*Set, tool.Registry, *lines) {
	t.Helper()
	rep := &lines{}
	set := New(servers, Options{Workspace: ws, Report: rep.add, OutputCap: 2000,
		Getenv: func(k string) string {
			if k == "SECRET_TOKEN" {
				return "s3cret"
			}
			return os.Getenv(k)
		}})
	t.Cleanup(func() { set.Close() })
	return set, tool.NewRegistry(set.Tools(context.Background())...), rep
}

func call(t *testing.T, tl tool.Tool, id, input string) tool.Result {
	t.Helper()
	if tl == nil {
		t.Fatal("no such tool")
	}
	res, err := tl.Run(tool.WithCall(context.Background(), id), json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestFilesystemServer(t *testing.T) { // issue 13: a real server from npm
	index := npmServer(t, "server-filesystem")
	dir := t.TempDir()
	_, reg, rep := startSet(t, dir, Server{Name: "files", Command: "node", Args: []string{index, dir},
		Class: map[string]config.OpClass{"move_file": config.ClassPure}})
	if got := rep.all(); len(got) != 1 || got[0] != "mcp: files 14 tools" {
		t.Errorf("reported %q, want the banner line alone", got)
	}
	classes := map[string]tool.Class{"mcp__files__read_text_file": tool.Pure, "mcp__files__write_file": tool.Effect,
		"mcp__files__edit_file": tool.Effect, "mcp__files__move_file": tool.Pure /* config beats the annotation */}
	for name, want := range classes {
		if reg[name] == nil || reg[name].Class() != want {
			t.Fatalf("%s: %v, want class %v", name, reg[name], want)
		}
	}
	if !tool.IsIdempotent(reg["mcp__files__write_file"]) || tool.IsIdempotent(reg["mcp__files__edit_file"]) {
		t.Error("write_file (idempotentHint) should be idempotent, edit_file not")
	}
	var schema map[string]any
	if err := json.Unmarshal(reg["mcp__files__write_file"].Schema(), &schema); err != nil || schema["type"] != "object" {
		t.Errorf("schema %s: %v", reg["mcp__files__write_file"].Schema(), err)
	}
	file := filepath.Join(dir, "a.txt")
	if res := call(t, reg["mcp__files__write_file"], "toolu_1", `{"path":"`+file+`","content":"hello mcp"}`); res.IsError {
		t.Fatalf("write_file: %s", res.Content)
	}
	if b, _ := os.ReadFile(file); string(b) != "hello mcp" {
		t.Errorf("file holds %q", b)
	}
	if res := call(t, reg["mcp__files__read_text_file"], "toolu_2", `{"path":"`+file+`"}`); res.IsError || res.Content != "hello mcp" {
		t.Errorf("read_text_file = %+v", res)
	}
	res := call(t, reg["mcp__files__read_text_file"], "toolu_3", `{"path":"/etc/passwd"}`)
	if !res.IsError || !strings.Contains(res.Content, "denied") {
		t.Errorf("outside the allowed dir: %+v, want the server's error as an error result", res)
	}
}

func TestEverythingServer(t *testing.T) { // images, resource links, env, trimming
	index := npmServer(t, "server-everything")
	ws := t.TempDir()
	_, reg, _ := startSet(t, ws, Server{Name: "every", Command: "node", Args: []string{index},
		Env: map[string]string{"NAMED": "${SECRET_TOKEN}"}})
	res := call(t, reg["mcp__every__get-tiny-image"], "toolu_1", `{}`)
	if res.IsError || !strings.Contains(res.Content, "[image image/png") || !strings.Contains(res.Content, "saved to .flower/mcp/") {
		t.Fatalf("image: %+v", res)
	}
	rel := res.Content[strings.Index(res.Content, ".flower/mcp/"):]
	rel = rel[:strings.Index(rel, "]")]
	if b, err := os.ReadFile(filepath.Join(ws, rel)); err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Errorf("saved image %s: %v, %q", rel, err, b[:min(len(b), 8)])
	}
	res = call(t, reg["mcp__every__get-resource-links"], "toolu_2", `{"count":2}`)
	if strings.Count(res.Content, "[resource link] ") != 2 {
		t.Errorf("resource links: %s", res.Content)
	}
	res = call(t, reg["mcp__every__get-env"], "toolu_3", `{}`)
	var env map[string]string
	if err := json.Unmarshal([]byte(res.Content), &env); err != nil {
		t.Fatalf("get-env: %v: %s", err, res.Content)
	}
	if env["NAMED"] != "s3cret" || env["PATH"] == "" {
		t.Errorf("env lacks what the config names or PATH: %v", env)
	}
	for k := range env {
		if k != "NAMED" && k != "PWD" /* set by the lifeline's sh */ && !strings.Contains(strings.Join(passEnv, " "), k) {
			t.Errorf("server got %s, which the config does not name", k)
		}
	}
	long := strings.Repeat("x", 5000)
	res = call(t, reg["mcp__every__echo"], "toolu_4", `{"message":"`+long+`"}`)
	if len(res.Content) > 2200 || !strings.Contains(res.Content, "bytes cut") {
		t.Errorf("a 5000-byte result with OutputCap 2000 came back %d bytes", len(res.Content))
	}
}

func TestInterruptCancelsCall(t *testing.T) {
	index := npmServer(t, "server-everything")
	_, reg, _ := startSet(t, t.TempDir(), Server{Name: "every", Command: "node", Args: []string{index}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := reg["mcp__every__trigger-long-running-operation"].Run(ctx, json.RawMessage(`{"duration":600,"steps":5}`))
		done <- err
	}()
	cancel()
	if err := <-done; err == nil {
		t.Error("an interrupted call returned no error")
	}
	// The server is still usable after the cancellation.
	if res := call(t, reg["mcp__every__echo"], "toolu_5", `{"message":"still here"}`); !strings.Contains(res.Content, "still here") {
		t.Errorf("after interrupt: %+v", res)
	}
}

func TestTimeout(t *testing.T) {
	index := npmServer(t, "server-everything")
	_, reg, _ := startSet(t, t.TempDir(), Server{Name: "every", Command: "node", Args: []string{index}, Timeout: 50 * time.Millisecond})
	res := call(t, reg["mcp__every__trigger-long-running-operation"], "toolu_1", `{"duration":600,"steps":5}`)
	if !res.IsError || !strings.Contains(res.Content, "no answer within 50ms") {
		t.Errorf("timed out call: %+v", res)
	}
}

func TestMissingCommandIsOneLine(t *testing.T) {
	set, reg, rep := startSet(t, t.TempDir(), Server{Name: "gone", Command: "no-such-mcp-server-xyz", Args: []string{"--stdio"}})
	if len(reg) != 0 {
		t.Errorf("tools of a server that never started: %v", reg.Names())
	}
	got := rep.all()
	want := `mcp: server "gone" (no-such-mcp-server-xyz --stdio): command "no-such-mcp-server-xyz" not found in PATH (install it, or give its full path in .mcp.json); its tools are absent`
	if len(got) != 1 || got[0] != want {
		t.Errorf("reported %q\nwant %q", got, want)
	}
	if set.Banner() != "" {
		t.Errorf("banner %q with no server running", set.Banner())
	}
}

func TestStderrTailOnFailedStart(t *testing.T) {
	_, _, rep := startSet(t, t.TempDir(), Server{Name: "bad", Command: "sh", Args: []string{"-c", "echo booting >&2; echo 'fatal: no config' >&2; exit 3"}})
	got := rep.all()
	if len(got) != 1 || !strings.Contains(got[0], `mcp: server "bad" (sh -c`) ||
		!strings.Contains(got[0], "stderr: booting | fatal: no config") || strings.Contains(got[0], "\n") {
		t.Errorf("reported %q", got)
	}
}

func TestDeadServerIsRestarted(t *testing.T) {
	index := npmServer(t, "server-everything")
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	rep := &lines{}
	set := New([]Server{{Name: "every", Command: "node", Args: []string{index}}}, Options{Workspace: t.TempDir(), Report: rep.add, Now: clock})
	defer set.Close()
	reg := tool.NewRegistry(set.Tools(context.Background())...)
	srv := set.servers[0]
	srv.down = make(chan struct{})
	srv.kill()
	waitDown(t, srv)
	res := call(t, reg["mcp__every__echo"], "toolu_1", `{"message":"hi"}`)
	if !res.IsError || !strings.Contains(res.Content, "next restart in 1s") {
		t.Errorf("a call within the backoff: %+v", res)
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	reg = tool.NewRegistry(set.Tools(context.Background())...)
	if res := call(t, reg["mcp__every__echo"], "toolu_2", `{"message":"back"}`); res.IsError || !strings.Contains(res.Content, "back") {
		t.Errorf("after the restart: %+v", res)
	}
	if got := rep.all(); len(got) < 2 || !strings.Contains(got[1], "restarting it at the next use") {
		t.Errorf("reported %q", got)
	}
}

// waitDown waits until the server noticed its death (the session's Wait
// returned): a condition, not a sleep.
func waitDown(t *testing.T, s *server) {
	t.Helper()
	select {
	case <-s.down:
	case <-time.After(30 * time.Second):
		t.Fatal("the killed server was never noticed")
	}
}
