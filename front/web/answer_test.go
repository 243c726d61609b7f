package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// An ask id nobody issued is 404; a number picks the option, as in the
// terminal (issue 11).
func TestAnswerPicksAnOptionAndUnknownIDsAre404(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	code, body := f.do("POST", "/answer", `{"id":"q99","text":"x"}`, token)
	if code != http.StatusNotFound || !strings.Contains(body, "q99") {
		t.Fatalf("unknown ask: %d %s", code, body)
	}
	code, _ = f.do("POST", "/decline", `{"id":"q7","reason":""}`, token)
	if code != http.StatusNotFound {
		t.Fatalf("decline of an unknown ask: %d", code)
	}
	_, done := f.agentRun(askThenEcho, "make a header")
	a := f.nextAsk()
	var ok struct{ OK bool }
	f.call("POST", "/answer", jsonText(map[string]string{"id": a.ID, "text": "2"}), &ok)
	if !ok.OK {
		t.Fatal("answer not taken")
	}
	if res := result(t, done); !strings.Contains(res.Text, "blue") {
		t.Fatalf("option 2 did not become \"blue\": %q", res.Text)
	}
	f.call("POST", "/answer", jsonText(map[string]string{"id": a.ID, "text": "1"}), &ok)
	if ok.OK {
		t.Error("a settled ask took a second answer")
	}
}
