package anthropic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/flower-run/flower/model"
)

var _ model.Speculator = (*Provider)(nil)

// Format is the JSON Kept returns: the Messages API's message params.
func (p *Provider) Format() string { return "anthropic-messages/1" }

// Prepare encodes req into its memo as Stream would, without sending it
// or building its body.
func (p *Provider) Prepare(req *model.Request) error {
	_, _, err := p.encode(req)
	return err
}

// Kept is the JSON of the first n messages the memo's last request sent,
// without cache breakpoints (the last message, which carried one, is never
// among them).
func (p *Provider) Kept(memo *model.Memo, n int) (msgs [][]byte, ok bool) {
	memo.Do(func(v *any) {
		c, isC := (*v).(*converted)
		if ok = isC && n <= len(c.wire); ok {
			msgs = c.wire[:n:n]
		}
	})
	return msgs, ok
}

// speculation is a request sent ahead of the Stream that may take it. Its
// body is before, the prefix, after: the prefix (megabytes on a long
// session) is streamed from its reader and never held in memory, since on
// a wake the first touch of that much fresh memory costs more than
// anything else (issue 12).
type speculation struct {
	before, after []byte
	prefix        *io.SectionReader
	cancel        context.CancelFunc
	done          chan struct{} // closed when resp and err are set
	resp          *model.Response
	err           error

	mu  sync.Mutex // guards buf and on
	buf []model.Delta
	on  func(model.Delta) // the taker's, once taken
}

// Speculate sends req with prefix before its messages; the next Stream
// with req.Memo whose body is the same takes the answer (model.Speculator).
// A newer speculation for the same memo abandons the older.
func (p *Provider) Speculate(ctx context.Context, req *model.Request, prefix *io.SectionReader) (func(), error) {
	if req.Memo == nil || len(req.Messages) == 0 || prefix.Size() == 0 {
		return nil, errors.New("anthropic: a speculation needs the conversation's memo, a prefix and messages after it")
	}
	params := p.head(req)
	msgs, tools, err := (&converted{}).encode(req.Messages, req.Tools, req.System == "")
	if err != nil {
		return nil, err
	}
	raw, err := body(params, msgs, tools)
	if err != nil {
		return nil, err
	}
	// raw is the body without the prefix: split it where the messages
	// begin, after `"messages":[`, and put the prefix and a comma there.
	at := bytes.Index(raw, []byte(`"messages":[`)) + len(`"messages":[`)
	s := &speculation{before: raw[:at:at], after: append([]byte(","), raw[at:]...), prefix: prefix, done: make(chan struct{})}
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	p.specMu.Lock()
	if p.specs == nil {
		p.specs = map[*model.Memo]*speculation{}
	}
	if old := p.specs[req.Memo]; old != nil {
		old.cancel()
	}
	p.specs[req.Memo] = s
	p.specMu.Unlock()
	go func() {
		defer close(s.done)
		stream := p.client.Messages.NewStreaming(ctx, params, option.WithMiddleware(s.send))
		defer stream.Close()
		msg, err := accumulate(stream, s.delta)
		if err != nil {
			s.err = convertError(err)
			return
		}
		s.resp, s.err = response(msg)
	}()
	return func() {
		if p.take(req.Memo, s) {
			s.cancel()
		}
		<-s.done // the prefix is read no more
	}, nil
}

// send is the middleware that sends the speculation's body, streamed.
func (s *speculation) send(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	req.ContentLength = int64(len(s.before)) + s.prefix.Size() + int64(len(s.after))
	req.GetBody = func() (io.ReadCloser, error) {
		return io.NopCloser(io.MultiReader(bytes.NewReader(s.before),
			io.NewSectionReader(s.prefix, 0, s.prefix.Size()), bytes.NewReader(s.after))), nil
	}
	req.Body, _ = req.GetBody()
	return next(req)
}

// is reports whether the speculation's body is raw, reading its prefix
// in small pieces.
func (s *speculation) is(raw []byte) bool {
	n := s.prefix.Size()
	if int64(len(raw)) != int64(len(s.before))+n+int64(len(s.after)) ||
		!bytes.HasPrefix(raw, s.before) || !bytes.HasSuffix(raw, s.after) {
		return false
	}
	mid := raw[len(s.before) : int64(len(s.before))+n]
	buf := make([]byte, 64<<10)
	for off := int64(0); off < n; {
		k, err := s.prefix.ReadAt(buf[:min(int64(len(buf)), n-off)], off)
		if !bytes.Equal(buf[:k], mid[off:off+int64(k)]) || err != nil && !(err == io.EOF && off+int64(k) == n) {
			return false
		}
		off += int64(k)
	}
	return true
}

// take removes memo's speculation if it is s, and reports whether it did:
// a speculation is taken once, by a Stream or a cancel.
func (p *Provider) take(memo *model.Memo, s *speculation) bool {
	p.specMu.Lock()
	defer p.specMu.Unlock()
	if p.specs[memo] != s {
		return false
	}
	delete(p.specs, memo)
	return true
}

// speculated takes memo's speculation, if any, for a Stream whose body is
// raw: it returns it when the bodies are the same, and abandons it when
// they are not (counted in Speculations).
func (p *Provider) speculated(memo *model.Memo, raw []byte) *speculation {
	if memo == nil {
		return nil
	}
	p.specMu.Lock()
	s := p.specs[memo]
	delete(p.specs, memo)
	p.specMu.Unlock()
	if s == nil {
		return nil
	}
	if !s.is(raw) {
		s.cancel()
		p.misses.Add(1)
		return nil
	}
	p.hits.Add(1)
	return s
}

// Speculations counts the speculations Streams took (hits) and abandoned
// because they built another request (misses).
func (p *Provider) Speculations() (hits, misses int64) { return p.hits.Load(), p.misses.Load() }

// delta passes a delta on to the taker, or keeps it until one comes.
func (s *speculation) delta(d model.Delta) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on != nil {
		s.on(d)
		return
	}
	s.buf = append(s.buf, d)
}

// wait is the answer for the Stream that took s: the deltas so far, then
// the rest as they come. A ctx ended first abandons it.
func (s *speculation) wait(ctx context.Context, on func(model.Delta)) (*model.Response, error) {
	if on == nil {
		on = func(model.Delta) {}
	}
	s.mu.Lock()
	for _, d := range s.buf {
		on(d)
	}
	s.buf, s.on = nil, on
	s.mu.Unlock()
	select {
	case <-s.done:
	case <-ctx.Done():
		s.cancel()
		<-s.done
	}
	return s.resp, s.err
}
