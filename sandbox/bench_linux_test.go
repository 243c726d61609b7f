package sandbox

import (
	"os/exec"
	"testing"
)

// BenchmarkStart: what Start and Wait of /bin/true cost: started directly
// (the floor), by bubblewrap, and under the run's helper (started before
// the timer), without Landlock and with it.
func BenchmarkStart(b *testing.B) {
	if err := namespaces().err; err != nil {
		b.Skipf("no namespaces here: %v", err)
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// bubblewrap making the same view for each command (doc.go: why
	// flower does not use it).
	b.Run("bwrap", func(b *testing.B) {
		bwrap, err := exec.LookPath("bwrap")
		if err != nil {
			b.Skip("no bubblewrap here")
		}
		ws := b.TempDir()
		for b.Loop() {
			c := exec.Command(bwrap, "--ro-bind", "/", "/", "--bind", ws, ws, "--dev", "/dev", "--proc", "/proc",
				"--unshare-user-try", "--unshare-pid", "--unshare-net", "--new-session", "--die-with-parent",
				"--cap-drop", "ALL", "/bin/true")
			if out, err := c.CombinedOutput(); err != nil {
				b.Fatalf("%v %s", err, out)
			}
		}
	})
	for _, mode := range []Mode{Off, Auto} {
		b.Run(string(mode), func(b *testing.B) {
			s, err := New(Config{Mode: mode, Workspace: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			start := func() {
				p, err := s.Start(&Cmd{Path: "/bin/true", Args: []string{"true"}})
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			start() // the helper
			for b.Loop() {
				start()
			}
		})
	}
}
