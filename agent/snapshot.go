package agent

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A wake's snapshot of the view (issue 12). Waking a long session costs
// what reading it and encoding its view cost: hundreds of milliseconds for
// 10,000 entries, before the model is asked anything. A snapshot keeps the
// encoded messages of a session's view up to a cut (view.Cut) in a file
// of the state directory (Options.Views); the next wake reads it and the
// entries after the cut only, and sends the request they make at once
// (model.Speculator), while the session loads as it always did. The first
// model call of the run then builds its request from the whole session as
// before and takes the answer to the one sent ahead only if the two
// bodies are the same byte for byte; otherwise that one is abandoned and
// the call sends its own. So a snapshot, stale, torn or forged, can cost
// a request, never change one: nothing of it is durable, the store stays
// the one truth, and a crash leaves what it leaves without it.
//
// The snapshot is derived data: written without an fsync, checked on
// opening (its key, format, the id of the cut's entry, its length). A
// run keeps it as a later load would build it (shadow.go): at its first
// model call it writes it anew unless it holds what that call sends, and
// after each response it appends the messages that became stable, so the
// wake after a crash finds it, whenever the crash came. The messages are
// streamed from the file into the request, never read into memory.

const viewVersion = 3

// A snapshot file is its head, JSON padded with spaces to viewHeadLen
// bytes, the last a newline, then the JSON of Msgs messages joined by
// commas, Size bytes. What lies beyond is ignored: a run appends messages
// first and rewrites the head after (a kill between leaves the old head,
// true of what it counts).
const viewHeadLen = 4096

// viewHead is the head of a snapshot file.
type viewHead struct {
	Version int    `json:"v"`
	Format  string `json:"format"` // model.Speculator.Format
	Key     string `json:"key"`
	CutUUID string `json:"cut"` // the cut's entry: the next wake loads from it on
	Denied  bool   `json:"denied"`
	Msgs    int    `json:"msgs"`
	Size    int64  `json:"size"`
}

// encode is the head as written.
func (h viewHead) encode() ([]byte, error) {
	h.Version = viewVersion
	line, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if len(line) >= viewHeadLen {
		return nil, fmt.Errorf("snapshot head of %d bytes: the session key is too long", len(line))
	}
	out := bytes.Repeat([]byte(" "), viewHeadLen)
	copy(out, line)
	out[viewHeadLen-1] = '\n'
	return out, nil
}

// viewSnap is a snapshot opened for reading: its messages are read from
// the file while a request is sent, never held in memory (a wake would pay
// more for touching megabytes of new memory than for anything else).
type viewSnap struct {
	head viewHead
	f    *os.File
	msgs *io.SectionReader
}

// viewPath is where the snapshot of key's view is kept.
func (r *Runtime) viewPath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(r.views, hex.EncodeToString(sum[:16])+".view")
}

// openView opens the snapshot of key's view in format; nil when there is
// none, it holds no message, or its head does not check.
func (r *Runtime) openView(key, format string) *viewSnap {
	f, err := os.Open(r.viewPath(key))
	if err != nil {
		return nil
	}
	buf := make([]byte, viewHeadLen)
	_, err = f.ReadAt(buf, 0)
	st, serr := f.Stat()
	var h viewHead
	if err != nil || serr != nil || buf[viewHeadLen-1] != '\n' || json.Unmarshal(buf, &h) != nil ||
		h.Version != viewVersion || h.Format != format || h.Key != key || h.CutUUID == "" || h.Msgs < 1 ||
		h.Size < 1 || st.Size() < viewHeadLen+h.Size {
		f.Close()
		return nil
	}
	return &viewSnap{head: h, f: f, msgs: io.NewSectionReader(f, viewHeadLen, h.Size)}
}

// same reports whether the snapshot holds msgs, read in small pieces.
func (v *viewSnap) same(msgs [][]byte) bool {
	if len(msgs) != v.head.Msgs {
		return false
	}
	r := bufio.NewReaderSize(io.NewSectionReader(v.msgs, 0, v.msgs.Size()), 64<<10)
	buf := make([]byte, 64<<10)
	for i, m := range msgs {
		if i > 0 {
			if c, err := r.ReadByte(); err != nil || c != ',' {
				return false
			}
		}
		for len(m) > 0 {
			k, err := io.ReadFull(r, buf[:min(len(buf), len(m))])
			if err != nil || !bytes.Equal(buf[:k], m[:k]) {
				return false
			}
			m = m[k:]
		}
	}
	_, err := r.ReadByte()
	return err == io.EOF
}

// createView replaces the snapshot of h.Key's view by one holding msgs,
// and returns it open for appending: written to a temporary file and
// renamed over the old one, without an fsync (derived data: a machine
// crash may lose it, and the next wake loads the session whole). A reader
// of the old file keeps reading the old one.
func (r *Runtime) createView(h viewHead, msgs [][]byte) (*viewFile, error) {
	if err := os.MkdirAll(r.views, 0o700); err != nil {
		return nil, err
	}
	path := r.viewPath(h.Key)
	tmp := path + ".tmp" // one writer per session: the workspace lock
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	v := &viewFile{f: f, head: h}
	v.head.Msgs, v.head.Size = 0, 0
	err = v.append(h.CutUUID, h.Denied, msgs)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, err
	}
	return v, nil
}

// reopenView opens key's snapshot, whose head is h, for appending.
func (r *Runtime) reopenView(h viewHead) (*viewFile, error) {
	f, err := os.OpenFile(r.viewPath(h.Key), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return &viewFile{f: f, head: h}, nil
}

// viewFile is a snapshot open for appending.
type viewFile struct {
	f    *os.File
	head viewHead // as written
}

// append adds msgs after the file's messages, then writes the head with
// the new cut.
func (v *viewFile) append(cut string, denied bool, msgs [][]byte) error {
	h := v.head
	// Through a buffer of at most 256 KiB: a wake's first snapshot is
	// megabytes, and fresh memory is what costs most here; a response
	// adds a few KiB.
	n := 0
	for _, m := range msgs {
		n += len(m) + 1
	}
	w := bufio.NewWriterSize(io.NewOffsetWriter(v.f, viewHeadLen+h.Size), min(n, 256<<10))
	for _, m := range msgs {
		if h.Msgs > 0 {
			w.WriteByte(',')
			h.Size++
		}
		w.Write(m)
		h.Msgs++
		h.Size += int64(len(m))
	}
	if err := w.Flush(); err != nil { // the first write error, if any
		return err
	}
	h.CutUUID, h.Denied = cut, denied
	line, err := h.encode()
	if err == nil {
		_, err = v.f.WriteAt(line, 0)
	}
	if err == nil {
		v.head = h
	}
	return err
}
