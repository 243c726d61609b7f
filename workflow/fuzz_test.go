package workflow

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flower-run/flower/store"
)

// Fuzz every decoder of a file flower reads from a run dir (DESIGN.md §5):
// the exports (manifest.json, lineage.json) and the files of an older
// flower that Upgrade imports. Decoding garbage never panics, and what is
// decoded is something the store can hold. The seed corpora under
// testdata/fuzz/ are real files: the v1 fixtures of cmd/flower/testdata and
// the exports of a run of this flower with the demo model.

// The targets call the decoders ReadManifest and ReadLineage use on the
// bytes they read, so that an input costs no file; TestReadersUseTheDecoders
// checks that the readers are those decoders behind os.ReadFile.

func FuzzReadManifest(f *testing.F) {
	f.Add([]byte(`[]`))
	f.Add([]byte(`null`))
	f.Add([]byte(`[{"run":"r","step":"work#retry1","ok":false,"errors":["overloaded"],"retired":["s0"],"started_at":"2026-12-01T17:18:01Z"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := decodeManifest(data)
		if err != nil {
			if rows != nil {
				t.Errorf("ReadManifest failed (%v) and returned %d rows", err, len(rows))
			}
			return
		}
		if !json.Valid(data) {
			t.Errorf("ReadManifest accepted invalid JSON %q", data)
		}
		// What was read is exported again as it was read, and reads back.
		out, err := json.Marshal(rows)
		if err != nil {
			return // a time outside RFC 3339's years: not an export flower writes
		}
		again, err := decodeManifest(out)
		if err != nil || len(again) != len(rows) {
			t.Errorf("the rows of %q, written out, read back as %d rows, %v", data, len(again), err)
		}
	})
}

func FuzzReadLineage(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"workspace":"/w","woke":-1,"steps":{"":""}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := decodeLineage(data)
		if err == nil && !json.Valid(data) {
			t.Errorf("ReadLineage accepted invalid JSON %q: %+v", data, l)
		}
	})
}

// FuzzV1Batch decodes state.json, lineage.json and manifest.json of an
// older flower into the batch Upgrade commits. An empty lineage or
// manifest stands for a missing file.
func FuzzV1Batch(f *testing.F) {
	f.Add("/w", []byte(`{"run":"x","status":"running","judge":"j","done":{"clarify":true,"goals":false}}`), []byte(`{"workspace":"/w","woke":3,"steps":{"work":"s"}}`), []byte(`[{"run":"x","step":"work","turns":2,"cost":0.5}]`))
	f.Add("/w", []byte(`null`), []byte(`null`), []byte(`null`))
	f.Add("/w", []byte(`{"run":"x"}`), []byte(`{"workspace":"/w","steps":{"work":"s"}}`), []byte(`[{"ok":"yes"},{"step":"goals"}]`))
	f.Fuzz(func(t *testing.T, ws string, state, lineage, manifest []byte) {
		b, woke, notes := v1Batch(ws, state, orNil(lineage), orNil(manifest))
		if r := b.Run; r != nil {
			if r.ID == "" || r.Workspace != ws {
				t.Errorf("run %+v: want an id and workspace %q", r, ws)
			}
			switch r.Status {
			case store.RunInFlight, store.RunFinished, store.RunDiscarded:
			default:
				t.Errorf("run status %q", r.Status)
			}
			if !r.Created.IsZero() && r.Created != r.Updated {
				t.Errorf("run created %v, updated %v", r.Created, r.Updated)
			}
		} else if !strings.Contains(notes, "state.json") {
			t.Errorf("no run imported, and the note %q does not say why", notes)
		}
		for _, bd := range b.Bind {
			if bd.Workspace != ws {
				t.Errorf("binding %+v of another workspace than %q", bd, ws)
			}
		}
		if woke != 0 && len(lineage) == 0 {
			t.Errorf("woke %d without a lineage", woke)
		}
		if len(b.Results) > 0 && strings.Contains(notes, "manifest.json") {
			t.Errorf("%d rows imported from a manifest the note says was ignored", len(b.Results))
		}
	})
}

func orNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func TestReadersUseTheDecoders(t *testing.T) {
	dir := t.TempDir()
	for _, data := range []string{`[{"run":"r","step":"work","num_turns":2}]`, `{"workspace":"/w","woke":2,"steps":{"work":"s"}}`, `garbage`} {
		for name, read := range map[string]func(string) (any, error){
			ManifestFile: func(p string) (any, error) { return ReadManifest(p) },
			LineageFile:  func(p string) (any, error) { return ReadLineage(p) },
		} {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			got, gotErr := read(path)
			var want any
			var wantErr error
			if name == ManifestFile {
				want, wantErr = decodeManifest([]byte(data))
			} else {
				want, wantErr = decodeLineage([]byte(data))
			}
			if (gotErr == nil) != (wantErr == nil) || (gotErr == nil && !reflect.DeepEqual(got, want)) {
				t.Errorf("%s of %q: %v, %v; the decoder gives %v, %v", name, data, got, gotErr, want, wantErr)
			}
		}
	}
	if rows, err := ReadManifest(filepath.Join(dir, "missing.json")); rows != nil || err != nil {
		t.Errorf("ReadManifest of a missing file: %v, %v; want no rows", rows, err)
	}
}
