package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestBashTimeoutKillsGroup: on timeout the whole group dies, background
// grandchildren included, and Run does not wait for them.
func TestBashTimeoutKillsGroup(t *testing.T) {
	env := testEnv(t)
	start := time.Now()
	res := run(t, &Bash{Env: env}, map[string]any{
		"command": "echo started; sleep 30 & echo $! > pid; wait",
		"timeout": 200,
	})
	wantError(t, res, "timed out after 200ms", "started")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %v after a 200ms timeout", d)
	}
	pid := readPID(t, filepath.Join(env.Workspace, "pid"))
	eventually(t, fmt.Sprintf("grandchild %d is dead", pid), func() bool { return !alive(pid) })
}

// TestBashKillsLeftovers: background processes still running when the
// command returns are killed, and do not hold up the result.
func TestBashKillsLeftovers(t *testing.T) {
	env := testEnv(t)
	res := run(t, &Bash{Env: env}, map[string]any{"command": "sleep 30 & echo $! > pid; echo done"})
	wantOK(t, res, "done")
	pid := readPID(t, filepath.Join(env.Workspace, "pid"))
	eventually(t, fmt.Sprintf("leftover %d is dead", pid), func() bool { return !alive(pid) })
}

// TestBashCancel: cancelling the context mid-command is a runtime failure
// (a Go error), and the group dies.
func TestBashCancel(t *testing.T) {
	env := testEnv(t)
	// The deadline only bounds a broken test; the goroutine cancels first.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pidFile := filepath.Join(env.Workspace, "pid")
	go func() {
		defer cancel()
		poll(10*time.Second, func() bool {
			b, err := os.ReadFile(pidFile)
			return err == nil && len(b) > 0
		})
	}()
	_, err := (&Bash{Env: env}).Run(ctx, json.RawMessage(`{"command": "echo $$ > pid; sleep 30"}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	pid := readPID(t, pidFile)
	eventually(t, "the shell is dead", func() bool { return !alive(pid) })
}

// Modes of TestHelperProcess, chosen by the helperEnv variable.
const (
	helperEnv      = "FLOWER_TOOL_HELPER"
	helperWSEnv    = "FLOWER_TOOL_HELPER_WS"
	helperBash     = "bash"     // run the Bash tool
	helperDeathSig = "deathsig" // start a shell with sysProcAttr only
)

// TestHelperProcess is not a test: it is the body of the "flower" process
// that TestBashDiesWithFlower starts and then SIGKILLs.
func TestHelperProcess(t *testing.T) {
	ws := os.Getenv(helperWSEnv)
	switch os.Getenv(helperEnv) {
	case helperBash:
		cmd := `echo $$ > pid; (sleep 1000; echo x > marker) & sleep 1000; echo x > marker`
		input, _ := json.Marshal(map[string]any{"command": cmd, "timeout": 600000})
		res, err := (&Bash{Env: Env{Workspace: ws}}).Run(context.Background(), input)
		fmt.Println("helper: Bash returned", res, err) // only if the kill failed
	case helperDeathSig:
		runtime.LockOSThread()
		c := exec.Command("sh", "-c", "echo $$ > pid; sleep 1000")
		c.Dir, c.SysProcAttr = ws, sysProcAttr()
		if err := c.Start(); err == nil {
			_ = c.Wait()
		}
	default:
		t.Skip("helper process for TestBashDiesWithFlower")
	}
	os.Exit(0)
}

// startHelper runs TestHelperProcess in a child process and returns it
// with the pid its shell wrote, once the shell runs.
func startHelper(t *testing.T, mode, ws string) (*exec.Cmd, int) {
	t.Helper()
	c := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	c.Env = append(os.Environ(), helperEnv+"="+mode, helperWSEnv+"="+ws)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	return c, readPID(t, filepath.Join(ws, "pid"))
}

// TestBashDiesWithFlower: when the process running the Bash tool is
// SIGKILLed, the command's whole process group dies with it (grandchildren
// included) and writes nothing afterwards.
func TestBashDiesWithFlower(t *testing.T) {
	ws := testEnv(t).Workspace
	helper, shell := startHelper(t, helperBash, ws)
	_, pgid, ok := procStat(shell)
	if !ok {
		t.Fatalf("shell %d not found", shell)
	}
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	if pgid != shell {
		t.Errorf("shell %d is in group %d, want a group of its own", shell, pgid)
	}
	eventually(t, "the group holds the shell, the watcher and the sleeps", func() bool {
		return len(groupMembers(pgid)) >= 4
	})

	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	eventually(t, fmt.Sprintf("process group %d is dead", pgid), func() bool {
		return len(groupMembers(pgid)) == 0
	})
	if _, err := os.Stat(filepath.Join(ws, "marker")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("marker written after the kill (stat: %v)", err)
	}
}

// TestDeathSignal: the parent-death signal alone kills the shell when the
// process that started it dies.
func TestDeathSignal(t *testing.T) {
	ws := testEnv(t).Workspace
	helper, shell := startHelper(t, helperDeathSig, ws)
	_, pgid, _ := procStat(shell)
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	if !alive(shell) {
		t.Fatalf("shell %d is not running", shell)
	}
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	eventually(t, fmt.Sprintf("shell %d is dead", shell), func() bool { return !alive(shell) })
}
