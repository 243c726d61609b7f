package sqlite_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/store/sqlite"
)

// bodySamples are entries of every kind and block type, with the awkward
// values a transcript holds.
func bodySamples() []store.Entry {
	at := time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.FixedZone("CEST", 2*3600))
	return []store.Entry{
		{UUID: "u1", Key: "k", Kind: store.KindNote, Time: at, Text: "hi"},
		{UUID: "u2", Parent: "u1", Key: "-w-p/s/task-1", Kind: store.KindAssistant, Time: at.UTC(),
			Message: &model.Message{Role: model.Assistant, Content: []model.Block{
				&model.Thinking{Thinking: "t", Signature: "s"}, &model.Thinking{Redacted: "opaque"},
				&model.Text{Text: "x \x00 «é» 🌸"},
				&model.ToolUse{ID: "1", Name: "Write", Input: json.RawMessage(`{"a":1}`)},
				&model.ToolUse{ID: "2", Name: "Read", Input: json.RawMessage(`{"trunc`)},
			}},
			Model: "claude-x", StopReason: model.StopToolUse, Cost: 0.0123,
			Usage: &model.Usage{Input: 1, Output: 2, CacheRead: 300000, CacheCreation: -1}},
		{UUID: "u3", Key: "k", Kind: store.KindOpStarted, Time: at,
			Op: &store.Op{ID: "1", Tool: "Write", Input: json.RawMessage(`{"a":1}`), Class: "effect"}},
		{UUID: "u4", Key: "k", Kind: store.KindResult, Time: at,
			Op: &store.Op{ID: "1", Tool: "Bash", Content: strings.Repeat("out\n", 300), IsError: true, Denied: true},
			Message: &model.Message{Role: model.User, Content: []model.Block{
				&model.ToolResult{ToolUseID: "1", Content: "ok"}, &model.ToolResult{ToolUseID: "2", IsError: true}}}},
		{UUID: "u5", Key: "k", Kind: store.KindNote, Message: &model.Message{Role: model.User}},
	}
}

func encodeBody(t testing.TB, e store.Entry) string {
	t.Helper()
	body, err := sqlite.AppendBody(nil, &e)
	if err != nil {
		t.Fatalf("encode %s: %v", e.UUID, err)
	}
	return string(body)
}

// bodyOpts compare decoded entries: times by instant and offset, not by
// *time.Location pointer; a NaN cost (the format keeps any float64) equals
// itself.
var bodyOpts = cmp.Options{
	cmp.Comparer(func(a, b time.Time) bool {
		_, oa := a.Zone()
		_, ob := b.Zone()
		return a.Equal(b) && oa == ob
	}),
	cmpopts.EquateNaNs(),
}

func TestBodyRoundTrip(t *testing.T) {
	for _, want := range append(bodySamples(), realistic("-home-me-proj/s", 300, 7)...) {
		got, err := sqlite.DecodeEntry(42, encodeBody(t, want))
		if err != nil {
			t.Fatalf("decode %s: %v", want.UUID, err)
		}
		want.Seq = 42
		if d := cmp.Diff(want, got, bodyOpts); d != "" {
			t.Fatalf("round trip of %s (-want +got):\n%s", want.UUID, d)
		}
	}
}

// TestBodyTruncated: a body cut at any offset, or with bytes after it, is
// an error: no prefix of an entry decodes as another entry.
func TestBodyTruncated(t *testing.T) {
	for _, e := range bodySamples() {
		body := encodeBody(t, e)
		for n := range len(body) {
			if _, err := sqlite.DecodeEntry(1, body[:n]); err == nil {
				t.Fatalf("%s cut to %d of %d bytes decoded", e.UUID, n, len(body))
			}
		}
		if _, err := sqlite.DecodeEntry(1, body+"\x00"); err == nil {
			t.Fatalf("%s with a byte after it decoded", e.UUID)
		}
	}
}

// FuzzEntryDecode: decoding any body never panics; what decodes has the
// seq of its row and survives an encode-decode round trip unchanged.
func FuzzEntryDecode(f *testing.F) {
	for _, e := range bodySamples() {
		f.Add(int64(1), []byte(encodeBody(f, e)))
	}
	for _, body := range []string{
		`{"uuid":"u","key":"k","kind":"note","time":"2025-01-01T00:00:00Z","text":"hi"}`, // a JSON body
		"\x01", "\x02", "", "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
	} {
		f.Add(int64(1), []byte(body))
	}
	f.Fuzz(func(t *testing.T, seq int64, body []byte) {
		e, err := sqlite.DecodeEntry(seq, string(body))
		if err != nil {
			return
		}
		if e.Seq != seq {
			t.Fatalf("seq = %d, want %d", e.Seq, seq)
		}
		again, err := sqlite.DecodeEntry(seq, encodeBody(t, e))
		if err != nil {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
		if d := cmp.Diff(e, again, bodyOpts); d != "" {
			t.Fatalf("round trip changed the entry (-first +second):\n%s", d)
		}
	})
}

// TestBodyCoversEntry: every field of an entry, its op, usage, message and
// blocks survives the body format. A field added to one of those types
// fails here until the format stores it.
func TestBodyCoversEntry(t *testing.T) {
	var e store.Entry
	fillAll(t, reflect.ValueOf(&e).Elem(), "entry")
	e.Seq = 42    // from the seq column, not the body
	e.Op.Size = 0 // a load-time mark (store.Heads), never stored
	got, err := sqlite.DecodeEntry(42, encodeBody(t, e))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(e, got, bodyOpts); d != "" {
		t.Fatalf("fields lost by the body format (-want +got):\n%s", d)
	}
}

// fillAll sets every field under v to a value other than its zero value.
// A message gets one block of each type.
func fillAll(t *testing.T, v reflect.Value, path string) {
	switch x := v.Addr().Interface().(type) {
	case *time.Time:
		*x = time.Date(2025, 3, 14, 15, 9, 26, 5, time.FixedZone("", -7*3600))
		return
	case *json.RawMessage:
		*x = json.RawMessage(`{"k":[1,"v"]}`)
		return
	case *[]model.Block:
		blocks := []model.Block{&model.Text{}, &model.Thinking{}, &model.ToolUse{}, &model.ToolResult{}}
		for _, b := range blocks {
			fillAll(t, reflect.ValueOf(b).Elem(), path+"."+reflect.TypeOf(b).Elem().Name())
		}
		*x = blocks
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(path)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(len(path)))
	case reflect.Float64:
		v.SetFloat(float64(len(path)) / 3)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(t, v.Elem(), path)
	case reflect.Struct:
		for i := range v.NumField() {
			fillAll(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	default:
		t.Fatalf("%s: fillAll does not know %s", path, v.Type())
	}
}

// runSamples are runs as Commit stores them: one with every field, with
// the awkward characters a task holds, and a bare one.
func runSamples() []store.Run {
	at := time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.FixedZone("CEST", 2*3600))
	return []store.Run{
		{ID: "20250314-150926-535897", Workspace: "/w/a b", Status: store.RunInFlight, Outcome: "passed",
			Task: "write a.go — «quoted» \"json\" \\ \x00 🌸", Phrase: "also\nb.go", Step: "work", Row: "work#round2",
			From: "s1", Fork: true, Prompt: "p", Session: "s2", Judge: "s3", Round: 2, Done: []string{"clarify", "goals"},
			Holder: "host 4242", Created: at, Updated: at.UTC()},
		{ID: "r", Workspace: "/", Status: store.RunDiscarded},
	}
}

func resultSamples() []store.StepResult {
	at := time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)
	return []store.StepResult{
		{Run: "r1", Step: "work#round2", SessionID: "s", OK: true, CostUSD: 0.0123, NumTurns: 7, Text: "done «é»\n",
			Error: "e", StartedAt: at, EndedAt: at.Add(time.Second), Attempts: 2, Errors: []string{"a", ""},
			Resumed: true, Retired: []string{"s0"}, Context: 12345, DurationS: 1.5},
		{Run: "r", Step: "s"},
	}
}

// recordOpts compare decoded run records: an empty list and none are the
// same list (the JSON body omits an empty Done).
var recordOpts = cmp.Options{bodyOpts, cmpopts.EquateEmpty()}

// FuzzDecodeRun: decoding any runs.body never panics; a failure names the
// run; what decodes is the run of its row and survives an encode-decode
// round trip unchanged.
func FuzzDecodeRun(f *testing.F) {
	for _, r := range runSamples() {
		body, err := sqlite.EncodeRun(&r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(r.ID, []byte(body))
	}
	for _, body := range []string{"", "null", "{}", "[]", `{"id":"r"}`, `{"id":"r","workspace":"/w","status":"x","done":null,"round":1e3}`} {
		f.Add("r", []byte(body))
	}
	f.Fuzz(func(t *testing.T, id string, body []byte) {
		r, err := sqlite.DecodeRun(id, string(body))
		if err != nil {
			if want := fmt.Sprintf("decode run %q", id); !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not name the run: want %s", err, want)
			}
			return
		}
		if r.ID != id || r.Workspace == "" || r.Status == "" {
			t.Fatalf("decoded a run Commit refuses, or of another row: %+v", r)
		}
		again, err := sqlite.EncodeRun(&r)
		if err != nil {
			t.Fatalf("a decoded run does not encode: %v", err)
		}
		r2, err := sqlite.DecodeRun(id, again)
		if err != nil {
			t.Fatalf("a re-encoded run does not decode: %v", err)
		}
		if d := cmp.Diff(r, r2, recordOpts); d != "" {
			t.Fatalf("round trip changed the run (-first +second):\n%s", d)
		}
	})
}

// FuzzDecodeResult: the same for a results.body.
func FuzzDecodeResult(f *testing.F) {
	for _, r := range resultSamples() {
		body, err := sqlite.EncodeResult(&r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(r.Run, r.Step, []byte(body))
	}
	for _, body := range []string{"", "null", "{}", `{"run":"r"}`, `{"run":"r","step":"s","errors":[1]}`, `{"run":"r","step":"s","cost_usd":1e400}`} {
		f.Add("r", "s", []byte(body))
	}
	f.Fuzz(func(t *testing.T, run, step string, body []byte) {
		r, err := sqlite.DecodeResult(run, step, string(body))
		if err != nil {
			if want := fmt.Sprintf("decode result %q/%q", run, step); !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not name the result: want %s", err, want)
			}
			return
		}
		if r.Run != run || r.Step != step || r.Run == "" || r.Step == "" {
			t.Fatalf("decoded a result Commit refuses, or of another row: %+v", r)
		}
		again, err := sqlite.EncodeResult(&r)
		if err != nil {
			t.Fatalf("a decoded result does not encode: %v", err)
		}
		r2, err := sqlite.DecodeResult(run, step, again)
		if err != nil {
			t.Fatalf("a re-encoded result does not decode: %v", err)
		}
		if d := cmp.Diff(r, r2, recordOpts); d != "" {
			t.Fatalf("round trip changed the result (-first +second):\n%s", d)
		}
	})
}
