package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

// bodyVersion is the first byte of every body: the version of the format
// drawn in store/sqlite's doc.go. On-disk format: change only with a new version.
const bodyVersion = 1

// Bits of the presence byte: which optional parts follow.
const (
	hasMessage = 1 << iota
	hasOp
	hasUsage
	hasAll = hasMessage | hasOp | hasUsage
)

// Block type tags.
const (
	tagText       = 1
	tagThinking   = 2
	tagToolUse    = 3
	tagToolResult = 4
)

// Op flags.
const (
	opIsError = 1 << iota
	opDenied
	opCut
	opAll = opIsError | opDenied | opCut
)

// AppendEntry appends the body of e (everything but Seq) to dst.
func AppendEntry(dst []byte, e *store.Entry) ([]byte, error) {
	t, err := e.Time.MarshalBinary()
	if err != nil {
		return nil, err
	}
	if e.Op != nil && e.Op.Partial() {
		return nil, store.ErrPartial
	}
	w := writer{b: append(dst, bodyVersion)}
	w.str(e.UUID)
	w.str(e.Parent)
	w.str(e.Key)
	w.str(string(e.Kind))
	w.bytes(t)
	w.str(e.Text)
	w.str(e.Model)
	w.str(e.StopReason)
	w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(e.Cost))
	var has byte
	if e.Message != nil {
		has |= hasMessage
	}
	if e.Op != nil {
		has |= hasOp
	}
	if e.Usage != nil {
		has |= hasUsage
	}
	w.b = append(w.b, has)
	if u := e.Usage; u != nil {
		w.varint(u.Input)
		w.varint(u.Output)
		w.varint(u.CacheRead)
		w.varint(u.CacheCreation)
	}
	if op := e.Op; op != nil {
		w.str(op.ID)
		w.str(op.Tool)
		w.bytes(op.Input)
		w.str(op.Class)
		w.str(op.Content)
		w.b = append(w.b, flags(op.IsError, opIsError)|flags(op.Denied, opDenied)|flags(op.Cut, opCut))
	}
	if m := e.Message; m != nil {
		if err := w.message(m); err != nil {
			return nil, err
		}
	}
	return w.b, nil
}

func flags(set bool, bit byte) byte {
	if set {
		return bit
	}
	return 0
}

// writer appends the parts of a body.
type writer struct{ b []byte }

func (w *writer) uvarint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *writer) varint(v int)     { w.b = binary.AppendVarint(w.b, int64(v)) }
func (w *writer) str(s string)     { w.uvarint(uint64(len(s))); w.b = append(w.b, s...) }
func (w *writer) bytes(b []byte)   { w.uvarint(uint64(len(b))); w.b = append(w.b, b...) }

func (w *writer) message(m *model.Message) error {
	w.str(string(m.Role))
	w.uvarint(uint64(len(m.Content)))
	for _, b := range m.Content {
		switch v := b.(type) {
		case *model.Text:
			w.b = append(w.b, tagText)
			w.str(v.Text)
		case *model.Thinking:
			w.b = append(w.b, tagThinking)
			w.str(v.Thinking)
			w.str(v.Signature)
			w.str(v.Redacted)
		case *model.ToolUse:
			w.b = append(w.b, tagToolUse)
			w.str(v.ID)
			w.str(v.Name)
			w.bytes(v.Input)
		case *model.ToolResult:
			w.b = append(w.b, tagToolResult)
			w.str(v.ToolUseID)
			w.str(v.Content)
			w.b = append(w.b, flags(v.IsError, 1))
		default:
			return fmt.Errorf("unknown block %T", b)
		}
	}
	return nil
}

var errShort = errors.New("body ends early")

// decodeBody decodes what AppendEntry wrote. Any other input is an error,
// never a panic, and never an allocation larger than the input. Every
// string of the entry is a slice of body, so decoding copies no text.
func decodeBody(body string) (store.Entry, error) { return decodeWith(&reader{s: body}) }

// decodeWith decodes the body r reads, from its start.
func decodeWith(r *reader) (store.Entry, error) {
	if len(r.s) == 0 {
		return store.Entry{}, errShort
	}
	if v := r.s[0]; v != bodyVersion {
		return store.Entry{}, fmt.Errorf("body format %d, this flower reads %d", v, bodyVersion)
	}
	r.off = 1
	var e store.Entry
	e.UUID = r.str()
	e.Parent = r.str()
	e.Key = r.str()
	e.Kind = store.Kind(r.str())
	r.time(&e.Time)
	e.Text = r.str()
	e.Model = r.str()
	e.StopReason = r.str()
	e.Cost = math.Float64frombits(r.uint64())
	has := r.byte()
	if has&^hasAll != 0 {
		r.fail(fmt.Errorf("unknown presence bits %#x", has))
	}
	if has&hasUsage != 0 {
		e.Usage = &model.Usage{Input: r.varint(), Output: r.varint(), CacheRead: r.varint(), CacheCreation: r.varint()}
	}
	if has&hasOp != 0 {
		e.Op = r.op()
	}
	if has&hasMessage != 0 {
		e.Message = r.message()
	}
	if r.err == nil && r.size != 0 {
		r.fail(errCut) // the part left out was not inside a result's content
	}
	if r.err == nil && r.off != len(r.s) {
		r.fail(fmt.Errorf("%d bytes after the entry", len(r.s)-r.off))
	}
	if r.err != nil {
		return store.Entry{}, r.err
	}
	return e, nil
}

// reader reads the parts of a body. The first error sticks: every later
// read returns a zero value, so decoding code checks once, at the end.
type reader struct {
	s   string
	off int
	err error
	// A cut body (heads.go): s is its start, rest its end, size its whole
	// length, and a result's content spans the part left out; head is how
	// much of that content to keep, when it is over bytes. Zero size: s is
	// the whole body.
	rest             string
	size, over, head int
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.off = len(r.s)
}

func (r *reader) byte() byte {
	if r.off >= len(r.s) {
		r.fail(errShort)
		return 0
	}
	c := r.s[r.off]
	r.off++
	return c
}

func (r *reader) uint64() uint64 {
	if len(r.s)-r.off < 8 {
		r.fail(errShort)
		return 0
	}
	v := binary.LittleEndian.Uint64([]byte(r.s[r.off : r.off+8]))
	r.off += 8
	return v
}

// uvarint decodes a varint of at most 64 bits, as encoding/binary does.
func (r *reader) uvarint() uint64 {
	var v uint64
	for i, shift := 0, uint(0); i < binary.MaxVarintLen64; i, shift = i+1, shift+7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break
			}
			return v | uint64(c)<<shift
		}
		v |= uint64(c&0x7f) << shift
	}
	r.fail(errors.New("varint overflows 64 bits"))
	return 0
}

func (r *reader) varint() int {
	u := r.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return int(v)
}

// str reads a length-prefixed string: a slice of the body, not a copy.
func (r *reader) str() string {
	n := r.uvarint()
	if n > uint64(len(r.s)-r.off) {
		r.fail(errShort)
		return ""
	}
	s := r.s[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

// raw reads a length-prefixed byte string as raw JSON; empty is nil.
func (r *reader) raw() []byte {
	s := r.str()
	if s == "" {
		return nil
	}
	return []byte(s)
}

func (r *reader) time(t *time.Time) {
	if err := t.UnmarshalBinary([]byte(r.str())); err != nil && r.err == nil {
		r.fail(fmt.Errorf("time: %w", err))
	}
}

func (r *reader) op() *store.Op {
	op := &store.Op{ID: r.str(), Tool: r.str(), Input: r.raw(), Class: r.str()}
	op.Content, op.Size = r.content()
	f := r.byte()
	if f&^opAll != 0 {
		r.fail(fmt.Errorf("unknown op flags %#x", f))
	}
	op.IsError, op.Denied, op.Cut = f&opIsError != 0, f&opDenied != 0, f&opCut != 0
	return op
}

func (r *reader) message() *model.Message {
	m := &model.Message{Role: model.Role(r.str())}
	n := r.uvarint()
	if n > uint64(len(r.s)-r.off) { // every block takes a byte at least
		r.fail(errShort)
		return nil
	}
	if n > 0 {
		m.Content = make([]model.Block, 0, n)
	}
	for range n {
		b := r.block()
		if r.err != nil {
			return nil
		}
		m.Content = append(m.Content, b)
	}
	return m
}

func (r *reader) block() model.Block {
	switch tag := r.byte(); tag {
	case tagText:
		return &model.Text{Text: r.str()}
	case tagThinking:
		return &model.Thinking{Thinking: r.str(), Signature: r.str(), Redacted: r.str()}
	case tagToolUse:
		return &model.ToolUse{ID: r.str(), Name: r.str(), Input: r.raw()}
	case tagToolResult:
		b := &model.ToolResult{ToolUseID: r.str(), Content: r.str()}
		switch r.byte() {
		case 0:
		case 1:
			b.IsError = true
		default:
			r.fail(errors.New("bad tool_result is_error byte"))
		}
		return b
	default:
		if r.err == nil {
			r.fail(fmt.Errorf("unknown block type %d", tag))
		}
		return nil
	}
}
