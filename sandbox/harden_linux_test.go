package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/flower-run/flower/internal/proctest"
)

// After hideEnviron, /proc/<pid>/environ no longer holds the values,
// while os.Getenv and children still see them.
func TestHideEnviron(t *testing.T) {
	if os.Getenv("FLOWER_HIDE_CHILD") == "1" {
		if err := hideEnviron([]string{"FLOWER_TEST_SECRET"}); err != nil {
			os.Stdout.WriteString("ERR " + err.Error())
			return
		}
		out, _ := exec.Command("sh", "-c", `tr '\0' '\n' < /proc/$PPID/environ; echo ---; echo "child=$FLOWER_TEST_SECRET"`).Output()
		os.Stdout.WriteString("getenv=" + os.Getenv("FLOWER_TEST_SECRET") + "\n" + string(out))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHideEnviron$")
	cmd.Env = append(os.Environ(), "FLOWER_HIDE_CHILD=1", "FLOWER_TEST_SECRET=hunter2-0123456789")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	if strings.Contains(got, "ERR ") {
		t.Skipf("this kernel refuses it: %s", got)
	}
	before, after, _ := strings.Cut(got, "---")
	if strings.Count(before, "hunter2-0123456789") != 1 || !strings.Contains(before, "getenv=hunter2") {
		t.Errorf("/proc/<pid>/environ still holds the secret, or getenv lost it:\n%s", got)
	}
	if !strings.Contains(after, "child=hunter2-0123456789") {
		t.Errorf("a child lost the variable:\n%s", got)
	}
}

// TestHardenThenStart: after Harden, the run's helper still starts (as
// any user: a process that is not dumpable cannot write a child's
// uid_map, issue 20), commands run in namespaces, and a process of the
// same user outside the sandbox reads neither flower's secrets nor, when
// not root, its environ at all.
func TestHardenThenStart(t *testing.T) {
	if os.Getenv("FLOWER_HARDEN_CHILD") == "1" {
		if err := Harden([]string{"FLOWER_TEST_SECRET"}); err != nil {
			fmt.Println("harden:", err)
		}
		s, err := New(Config{Mode: Off, Workspace: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		fmt.Printf("namespaces: %v\n", namespaces().err)
		out, err := run(t, s, "echo in-sandbox; ls /proc | grep -c '^[0-9]'")
		fmt.Printf("sandbox: %v %s", err, out)
		env, err := exec.Command("cat", fmt.Sprintf("/proc/%d/environ", os.Getpid())).CombinedOutput()
		fmt.Printf("environ: %v %s\n", err, env)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHardenThenStart$", "-test.v")
	cmd.Env = append(os.Environ(), "FLOWER_HARDEN_CHILD=1", "FLOWER_TEST_SECRET=hunter2-0123456789")
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "sandbox: <nil> in-sandbox") {
		t.Errorf("no command ran after Harden:\n%s", out)
	}
	if strings.Contains(out, "hunter2") {
		t.Errorf("a process of the same user read the secret:\n%s", out)
	}
	if os.Getuid() != 0 && !strings.Contains(out, "environ: exit status") {
		t.Errorf("a process of the same user read flower's environ:\n%s", out)
	}
	if os.Getenv(proctest.NeedNamespaces) != "" && !strings.Contains(out, "namespaces: <nil>") {
		t.Errorf("no namespaces after Harden:\n%s", out)
	}
}
