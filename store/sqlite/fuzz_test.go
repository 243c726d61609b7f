package sqlite_test

import (
	"encoding/json"
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
	e.Seq = 42 // from the seq column, not the body
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
