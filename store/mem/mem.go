// Package mem is an in-memory store.Store: nothing survives the process.
// It is for tests and benchmarks that want the agent loop without a disk
// (BenchmarkTurnMem measures the loop's own cost with it), and it passes
// the same conformance suite as store/sqlite.
//
// Entries are deep-copied on the way in and on the way out, so a caller
// that changes an entry after Append, or a loaded entry, changes nothing
// in the store, as with a real backend.
package mem

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/flower-run/flower/model"
	"github.com/flower-run/flower/store"
)

var _ store.Store = (*Store)(nil)

// Store is an in-memory session store, safe for concurrent use.
type Store struct {
	mu        sync.Mutex // guards all the fields below
	seq       int64
	entries   map[string][]store.Entry // by key, in append order
	uuids     map[string]bool
	meta      map[string]store.Meta
	summaries map[string]string
	runs      []store.Run        // in creation order
	threads   map[string]*thread // by workspace
	results   []store.StepResult // in first-write order

	ev eventLog // the event log: its own lock (events.go)
}

// thread is a workspace's current thread: its number, wakes and bindings.
type thread struct {
	n, woke  int
	bindings []store.Binding
}

// New returns an empty store.
func New() *Store {
	return &Store{
		entries:   map[string][]store.Entry{},
		uuids:     map[string]bool{},
		meta:      map[string]store.Meta{},
		summaries: map[string]string{},
		threads:   map[string]*thread{},
	}
}

// Append adds entries in order, all or none.
func (s *Store) Append(ctx context.Context, entries ...store.Entry) error {
	return s.Commit(ctx, store.Batch{Entries: entries})
}

// Commit applies a batch, all or none.
func (s *Store) Commit(ctx context.Context, b store.Batch) error {
	if b.Empty() {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if err := checkBatch(b); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range b.Entries {
		if s.uuids[e.UUID] {
			return fmt.Errorf("append entries: uuid %s: %w", e.UUID, store.ErrDuplicate)
		}
	}
	s.applyRuns(b)
	for _, m := range b.Meta {
		s.meta[m.Key] = m
	}
	for _, e := range b.Entries {
		s.seq++
		c := clone(e)
		c.Seq = s.seq
		s.entries[e.Key] = append(s.entries[e.Key], c)
		s.uuids[e.UUID] = true
	}
	return nil
}

// checkBatch refuses a batch a real backend would refuse, before anything
// is applied.
func checkBatch(b store.Batch) error {
	batch := map[string]bool{}
	for i, e := range b.Entries {
		if e.Key == "" || e.UUID == "" || e.Kind == "" {
			return fmt.Errorf("append entries: entry %d: key, uuid and kind are required", i)
		}
		if batch[e.UUID] {
			return fmt.Errorf("append entries: uuid %s: %w", e.UUID, store.ErrDuplicate)
		}
		batch[e.UUID] = true
		if e.Op != nil && e.Op.Partial() {
			return fmt.Errorf("append entries: entry %s: %w", e.UUID, store.ErrPartial)
		}
	}
	if b.Run != nil && (b.Run.ID == "" || b.Run.Workspace == "" || b.Run.Status == "") {
		return errors.New("commit run: id, workspace and status are required")
	}
	for _, x := range b.Bind {
		if x.Workspace == "" || x.Step == "" || x.Session == "" {
			return errors.New("commit binding: workspace, step and session are required")
		}
	}
	for _, r := range b.Results {
		if r.Run == "" || r.Step == "" {
			return errors.New("commit result: run and step are required")
		}
	}
	for _, m := range b.Meta {
		if m.Key == "" {
			return errors.New("put meta: key is required")
		}
	}
	return nil
}

// applyRuns applies the run-state part of a batch; s.mu is held.
func (s *Store) applyRuns(b store.Batch) {
	if b.Archive != "" {
		t := s.thread(b.Archive)
		*t = thread{n: t.n + 1}
	}
	if b.Wake != "" {
		s.thread(b.Wake).woke++
	}
	for _, x := range b.Bind {
		t := s.thread(x.Workspace)
		t.bindings = append(t.bindings, x)
	}
	if b.Run != nil {
		s.putRun(cloneRun(*b.Run))
	}
	for _, r := range b.Results {
		s.putResult(cloneResult(r))
	}
}

func (s *Store) thread(ws string) *thread {
	t := s.threads[ws]
	if t == nil {
		t = &thread{}
		s.threads[ws] = t
	}
	return t
}

func (s *Store) putRun(r store.Run) {
	for i := range s.runs {
		if s.runs[i].ID == r.ID {
			s.runs[i] = r
			return
		}
	}
	s.runs = append(s.runs, r)
}

func (s *Store) putResult(r store.StepResult) {
	for i := range s.results {
		if s.results[i].Run == r.Run && s.results[i].Step == r.Step {
			s.results[i] = r
			return
		}
	}
	s.results = append(s.results, r)
}

// Run returns a copy of the run of that id.
func (s *Store) Run(ctx context.Context, id string) (store.Run, bool, error) {
	if err := ctx.Err(); err != nil {
		return store.Run{}, false, fmt.Errorf("run %s: %w", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.runs {
		if r.ID == id {
			return cloneRun(r), true, nil
		}
	}
	return store.Run{}, false, nil
}

// Runs lists copies of the runs of workspace ("" for all), oldest first.
func (s *Store) Runs(ctx context.Context, workspace string) ([]store.Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.Run
	for _, r := range s.runs {
		if workspace == "" || r.Workspace == workspace {
			out = append(out, cloneRun(r))
		}
	}
	return out, nil
}

// Lineage returns the current thread of workspace.
func (s *Store) Lineage(ctx context.Context, workspace string) (store.Lineage, error) {
	if err := ctx.Err(); err != nil {
		return store.Lineage{}, fmt.Errorf("lineage: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[workspace]
	if t == nil {
		return store.LineageOf(workspace, 0, 0, nil), nil
	}
	return store.LineageOf(workspace, t.n, t.woke, t.bindings), nil
}

// Results returns copies of the results of run ("" for all).
func (s *Store) Results(ctx context.Context, run string) ([]store.StepResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.StepResult
	for _, r := range s.results {
		if run == "" || r.Run == run {
			out = append(out, cloneResult(r))
		}
	}
	return out, nil
}

func cloneRun(r store.Run) store.Run {
	r.Done = append([]string(nil), r.Done...)
	r.Created, r.Updated = r.Created.Round(0), r.Updated.Round(0)
	return r
}

func cloneResult(r store.StepResult) store.StepResult {
	r.Errors = append([]string(nil), r.Errors...)
	r.Retired = append([]string(nil), r.Retired...)
	r.StartedAt, r.EndedAt = r.StartedAt.Round(0), r.EndedAt.Round(0)
	return r
}

// Last returns a copy of the newest entry of key with that kind.
func (s *Store) Last(ctx context.Context, key string, kind store.Kind) (store.Entry, bool, error) {
	if err := ctx.Err(); err != nil {
		return store.Entry{}, false, fmt.Errorf("last %s of %s: %w", kind, key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	stored := s.entries[key]
	for i := len(stored) - 1; i >= 0; i-- {
		if stored[i].Kind == kind {
			return clone(stored[i]), true, nil
		}
	}
	return store.Entry{}, false, nil
}

// Load returns copies of the entries of exactly key, in append order.
func (s *Store) Load(ctx context.Context, key string) ([]store.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	stored := s.entries[key]
	if len(stored) == 0 {
		return nil, nil
	}
	out := make([]store.Entry, len(stored))
	for i, e := range stored {
		out[i] = clone(e)
	}
	return out, nil
}

// PutMeta records m for m.Key; the latest put wins.
func (s *Store) PutMeta(ctx context.Context, m store.Meta) error {
	if m.Key == "" {
		return errors.New("put meta: key is required")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("put meta %s: %w", m.Key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meta[m.Key] = m
	return nil
}

// Meta returns the metadata of key.
func (s *Store) Meta(ctx context.Context, key string) (store.Meta, bool, error) {
	if err := ctx.Err(); err != nil {
		return store.Meta{}, false, fmt.Errorf("meta %s: %w", key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.meta[key]
	return m, ok, nil
}

// Sessions lists the metadata of the keys that start with prefix, oldest
// first, ties in key order.
func (s *Store) Sessions(ctx context.Context, prefix string) ([]store.Meta, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sessions %s: %w", prefix, err)
	}
	s.mu.Lock()
	var out []store.Meta
	for key, m := range s.meta {
		if strings.HasPrefix(key, prefix) {
			out = append(out, m)
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if c := out[i].Created.Compare(out[j].Created); c != 0 {
			return c < 0
		}
		return out[i].Key < out[j].Key
	})
	return out, nil
}

// PutSummary stores text as the current summary of key.
func (s *Store) PutSummary(ctx context.Context, key, text string) error {
	if key == "" {
		return errors.New("put summary: key is required")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("put summary %s: %w", key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.summaries[key] = text
	return nil
}

// Summary returns the latest summary of key.
func (s *Store) Summary(ctx context.Context, key string) (string, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", false, fmt.Errorf("summary %s: %w", key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	text, ok := s.summaries[key]
	return text, ok, nil
}

// Close does nothing: there is nothing to release.
func (s *Store) Close() error { return nil }

// clone deep-copies what an entry points to: its message, blocks, op,
// usage and raw JSON. Strings are immutable and shared.
func clone(e store.Entry) store.Entry {
	e.Time = e.Time.Round(0) // drop the monotonic reading, as a disk would
	if e.Message != nil {
		m := model.Message{Role: e.Message.Role}
		if e.Message.Content != nil {
			m.Content = make([]model.Block, len(e.Message.Content))
			for i, b := range e.Message.Content {
				m.Content[i] = cloneBlock(b)
			}
		}
		e.Message = &m
	}
	if e.Op != nil {
		op := *e.Op
		op.Input = cloneBytes(op.Input)
		op.Size = 0 // a load-time mark (store.Heads), never stored
		e.Op = &op
	}
	if e.Usage != nil {
		u := *e.Usage
		e.Usage = &u
	}
	return e
}

func cloneBlock(b model.Block) model.Block {
	switch v := b.(type) {
	case *model.Text:
		c := *v
		return &c
	case *model.Thinking:
		c := *v
		return &c
	case *model.ToolUse:
		c := *v
		c.Input = cloneBytes(c.Input)
		return &c
	case *model.ToolResult:
		c := *v
		return &c
	}
	return b // a nil block, or a type this package predates: kept as is
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}
