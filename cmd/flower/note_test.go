package main

import (
	"bufio"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flower-run/flower/model/modeltest"
)

// TestCtrlCTakesANote: the first Ctrl-C asks for a note; the line typed
// next interrupts the turn in flight and reaches the model as the person's
// message in the same session (R2.8, R3.7).
func TestCtrlCTakesANote(t *testing.T) {
	arrived := make(chan *modeltest.Request, 8)
	srv := modeltest.NewAnthropic(func(r *modeltest.Request) modeltest.Turn {
		arrived <- r
		return modeltest.Turn{Fault: &modeltest.Fault{Delay: time.Hour}} // answered by no one: cut or killed
	})
	defer srv.Close()
	dir := t.TempDir()
	cmd := exec.Command(flowerBin, "write a poem")
	cmd.Dir = dir
	cmd.Env = append(baseEnv(dir), "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=k")
	stdin, _ := cmd.StdinPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	asked := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Type a note") {
				close(asked)
			}
		}
	}()
	<-arrived
	cmd.Process.Signal(syscall.SIGINT)
	<-asked
	stdin.Write([]byte("make it rhyme\n"))
	second := <-arrived
	last := second.Messages[len(second.Messages)-1]
	if second.N != 2 || len(second.Messages) != 1 || !strings.Contains(last.TextOf(), "make it rhyme") ||
		!strings.Contains(second.Messages[0].TextOf(), "write a poem") {
		t.Fatalf("request %d after the note: %+v", second.N, second.Messages)
	}
}
