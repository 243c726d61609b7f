package anthropic

import (
	"bytes"
	"context"
	"errors"
	"sync"

	"github.com/flower-run/flower/model"
)

var _ model.Speculator = (*Provider)(nil)

// Format is the JSON Kept returns: the Messages API's message params.
func (p *Provider) Format() string { return "anthropic-messages/1" }

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

// speculation is a request sent ahead of the Stream that may take it.
type speculation struct {
	body   []byte
	cancel context.CancelFunc
	done   chan struct{} // closed when resp and err are set
	resp   *model.Response
	err    error

	mu  sync.Mutex // guards buf and on
	buf []model.Delta
	on  func(model.Delta) // the taker's, once taken
}

// Speculate sends req with prefix before its messages; the next Stream
// with req.Memo whose body is the same takes the answer (model.Speculator).
// A newer speculation for the same memo abandons the older.
func (p *Provider) Speculate(ctx context.Context, req *model.Request, prefix [][]byte) (func(), error) {
	if req.Memo == nil {
		return nil, errors.New("anthropic: a speculation needs the conversation's memo")
	}
	params := p.head(req)
	msgs, tools, err := (&converted{}).encode(req.Messages, req.Tools, req.System == "")
	if err != nil {
		return nil, err
	}
	raw, err := body(params, append(prefix[:len(prefix):len(prefix)], msgs...), tools)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &speculation{body: raw, cancel: cancel, done: make(chan struct{})}
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
		s.resp, s.err = p.send(ctx, params, raw, s.delta)
	}()
	return func() {
		if p.take(req.Memo, s) {
			cancel()
		}
	}, nil
}

// take removes memo's speculation if it is s (nil: any), and reports
// whether it did: a speculation is taken once, by a Stream or a cancel.
func (p *Provider) take(memo *model.Memo, s *speculation) bool {
	p.specMu.Lock()
	defer p.specMu.Unlock()
	cur := p.specs[memo]
	if cur == nil || s != nil && cur != s {
		return false
	}
	delete(p.specs, memo)
	return true
}

// speculated takes memo's speculation, if any, for a Stream whose body is
// raw: it returns it when the bodies are the same, and abandons it when
// they are not (counted in Misses).
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
	if !bytes.Equal(s.body, raw) {
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
