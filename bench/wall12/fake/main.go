// Command fake serves a fake Anthropic Messages API on loopback for the
// end-to-end comparison of flower once with a bare SDK loop (issue 19):
// every session is the same 12 turns (Write a file, Bash cat and wc it,
// Read it, three times over, then a text answer), each answer held back
// -delay (default 50 ms) before its first byte.
//
// The answer to a request depends only on the request: its turn is the
// number of assistant messages it carries, so any number of sessions, one
// after another or side by side, each play the script from its start.
//
// It prints its base URL on standard output, then serves until killed.
// With -dump FILE, the body of the first session's first request is
// written to FILE: the bare loop sends the same system prompt and tool
// definitions. With -log, each request is one line on standard error: its
// arrival (Unix microseconds), the turn, the tool whose result it brings,
// the message count, the sizes of the system prompt and of the body, the
// tools offered and the start of the last tool result, so that a run can
// be checked to have done the 12 turns with real tool results, and the
// time between two requests of a session split by tool.
//
//	go run ./bench/wall12/fake [-delay 50ms] [-log] [-dump FILE]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/model/modeltest"
)

// dumpOnce writes -dump once.
var dumpOnce sync.Once

func main() {
	delay := flag.Duration("delay", 50*time.Millisecond, "how long each answer is held back")
	logReqs := flag.Bool("log", false, "one line per request on standard error")
	dump := flag.String("dump", "", "write the body of the first session's first request to this file")
	flag.Parse()
	log.SetFlags(0)

	srv := modeltest.NewAnthropic(func(r *modeltest.Request) modeltest.Turn {
		n := turnOf(r.Messages)
		t := Script[min(n, len(Script)-1)]
		t.ToolCalls = append([]modeltest.ToolCall(nil), t.ToolCalls...)
		for i := range t.ToolCalls {
			t.ToolCalls[i].ID = fmt.Sprintf("toolu_%02d_%d", n, i) // the same in every session
		}
		if *delay > 0 {
			t.Fault = &modeltest.Fault{Delay: *delay}
		}
		if n == 0 && *dump != "" {
			dumpOnce.Do(func() {
				if err := os.WriteFile(*dump, r.Body, 0o644); err != nil {
					log.Print(err)
				}
			})
		}
		if *logReqs {
			log.Printf("t=%d turn=%d after=%s msgs=%d system=%dB tools=%s body=%dB last=%q",
				time.Now().UnixMicro(), n+1, after(n), len(r.Messages), len(r.System), strings.Join(r.Tools, ","), len(r.Body), lastResult(r.Messages))
		}
		return t
	})
	defer srv.Close()
	srv.Forget() // it serves many runs: counting them is enough
	fmt.Println(srv.URL)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
}

// turnOf is the 0-based turn a request asks for: the number of answers
// the conversation already holds.
func turnOf(msgs []model.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == model.Assistant {
			n++
		}
	}
	return n
}

// after names the tool whose result turn n (0-based) brings, "-" for none.
func after(n int) string {
	if n == 0 || n > len(Script) || len(Script[n-1].ToolCalls) == 0 {
		return "-"
	}
	return Script[n-1].ToolCalls[0].Name
}

// lastResult is the start of the last tool result in msgs, for -log.
func lastResult(msgs []model.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for j := len(msgs[i].Content) - 1; j >= 0; j-- {
			if r, ok := msgs[i].Content[j].(*model.ToolResult); ok {
				s := r.Content
				if len(s) > 60 {
					s = s[:60]
				}
				return s
			}
		}
	}
	return ""
}

// File is the file the session writes, checks and reads back.
const File = "notes.txt"

func write(round int) modeltest.ToolCall {
	var b strings.Builder
	for i := 1; i <= 20*round; i++ {
		fmt.Fprintf(&b, "line %d of round %d: the quick brown fox jumps over the lazy dog\n", i, round)
	}
	in, _ := json.Marshal(map[string]string{"file_path": File, "content": b.String()})
	return modeltest.ToolCall{Name: "Write", Input: string(in)}
}

func bash(cmd string) modeltest.ToolCall {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return modeltest.ToolCall{Name: "Bash", Input: string(in)}
}

func read() modeltest.ToolCall {
	in, _ := json.Marshal(map[string]string{"file_path": File})
	return modeltest.ToolCall{Name: "Read", Input: string(in)}
}

func call(text string, c modeltest.ToolCall) modeltest.Turn {
	return modeltest.Turn{Text: text, ToolCalls: []modeltest.ToolCall{c}}
}

// Script is the session: 11 tool turns (3 Write, 5 Bash, 3 Read), then
// the answer.
var Script = []modeltest.Turn{
	call("I'll write the notes file.", write(1)),
	call("Let me check it with cat.", bash("cat "+File)),
	call("And count its lines.", bash("wc -l "+File)),
	call("Let me read it back.", read()),
	call("Now the second round.", write(2)),
	call("Checking it.", bash("cat "+File+" | wc -l")),
	call("Reading it back.", read()),
	call("The third round.", write(3)),
	call("Checking it.", bash("wc -lc "+File)),
	call("And the last line.", bash("tail -n 1 "+File)),
	call("Reading it back.", read()),
	{Text: "Done: notes.txt holds 60 lines, checked with cat, wc and tail, and read back."},
}
