package sandbox

import (
	"os"
	"os/exec"
	"strings"
	"testing"
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
