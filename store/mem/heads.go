package mem

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/flower-run/flower/store"
)

// LoadHeads is Load with the content of each tool result over over bytes
// cut to its first head bytes (store.Heads). Memory holds it all anyway;
// this is here so that the agent's wake runs the same on every store.
func (s *Store) LoadHeads(ctx context.Context, key string, over, head int) ([]store.Entry, error) {
	if head < 1 || head >= over {
		return nil, fmt.Errorf("load %s: head %d must be in [1, over %d)", key, head, over)
	}
	out, err := s.Load(ctx, key)
	for i := range out {
		if op := out[i].Op; op != nil && out[i].Kind == store.KindResult && len(op.Content) > over {
			op.Size, op.Content = len(op.Content), op.Content[:head]
		}
	}
	return out, err
}

// ResultContent returns the whole content of the op of key's entry seq.
func (s *Store) ResultContent(ctx context.Context, key string, seq int64) (string, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", false, fmt.Errorf("result content %s: %w", key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	stored := s.entries[key] // in seq order
	i, found := slices.BinarySearchFunc(stored, seq, func(e store.Entry, seq int64) int { return cmp.Compare(e.Seq, seq) })
	if !found || stored[i].Op == nil {
		return "", false, nil
	}
	return stored[i].Op.Content, true, nil
}

var _ store.Heads = (*Store)(nil)
