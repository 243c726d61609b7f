package failpoint

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in    string
		point string
		n     int64
		ok    bool
	}{
		{"", "", 0, false},
		{"after-effect", "after-effect", 1, true},
		{"after-effect:3", "after-effect", 3, true},
		{" after-result:1 ", "after-result", 1, true},
		{"after-effect:0", "", 0, false},
		{"after-effect:-2", "", 0, false},
		{"after-effect:x", "", 0, false},
		{":3", "", 0, false},
	}
	for _, tt := range tests {
		point, n, ok := Parse(tt.in)
		if point != tt.point || n != tt.n || ok != tt.ok {
			t.Errorf("Parse(%q) = %q, %d, %v; want %q, %d, %v", tt.in, point, n, ok, tt.point, tt.n, tt.ok)
		}
	}
}

// TestHelperProcess is the child of TestHitKills: it hits "p" five times,
// printing the count before each hit, and one other point in between.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("FAILPOINT_HELPER") != "1" {
		t.Skip("helper process")
	}
	for i := 1; i <= 5; i++ {
		os.Stdout.WriteString(strconv.Itoa(i) + "\n")
		Hit("other")
		Hit("p")
	}
	os.Stdout.WriteString("survived\n")
}

func TestHitKills(t *testing.T) {
	tests := []struct {
		env    string
		killed bool
		last   string // the last line printed
	}{
		{"", false, "survived"},
		{"p", true, "1"},
		{"p:3", true, "3"},
		{"p:6", false, "survived"}, // never reached
		{"q", false, "survived"},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
			cmd.Env = append(os.Environ(), "FAILPOINT_HELPER=1", Env+"="+tt.env)
			out, err := cmd.Output()
			var ee *exec.ExitError
			killed := errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
			if killed != tt.killed {
				t.Fatalf("killed = %v (err %v), want %v\n%s", killed, err, tt.killed, out)
			}
			lines := strings.Fields(string(out))
			if tt.killed && lines[len(lines)-1] != tt.last {
				t.Fatalf("output %q: killed after line %q, want %q", out, lines[len(lines)-1], tt.last)
			}
			if !tt.killed && !strings.Contains(string(out), tt.last) {
				t.Fatalf("output %q, want %q", out, tt.last)
			}
		})
	}
}

func BenchmarkHitUnarmed(b *testing.B) {
	for b.Loop() {
		Hit("after-effect")
	}
}
