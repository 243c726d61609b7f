package view

import (
	"fmt"

	"github.com/flower-run/flower/store"
)

// Trim replaces old large tool results by a pointer to a file holding the
// full text (R4.6). Nothing is lost; it just stops riding along.
type Trim struct {
	// MinSize is the size in bytes above which an old result is trimmed; 0
	// means 4000.
	MinSize int
	// Spill makes sure the full text of op is in a file the model can Read
	// and returns its path. When it fails the result stays whole. op may
	// be partial (store.Heads): Spill then reads the rest from the store
	// when it has to write the file, and makes op whole.
	Spill func(op *store.Op) (string, error)
}

// Heads is what the view needs of the results it may trim: those over
// over bytes show only their first head bytes, so a loader may leave the
// rest in the store (store.Heads.LoadHeads) when Old counts every entry
// it loads.
func (t *Trim) Heads() (over, head int) { return t.minSize(), headSize }

func (t *Trim) minSize() int {
	if t.MinSize > 0 {
		return t.MinSize
	}
	return 4000
}

// headSize is how much of a trimmed result stays in view.
const headSize = 400

func (t *Trim) pointer(op *store.Op) string {
	path, err := t.Spill(op)
	if err != nil && op.Partial() { // the store could not give the rest: say so
		return fmt.Sprintf("[trimmed: this result was %d bytes; its full text could not be written to a file (%v). It begins:]\n%s\n[…]",
			op.Len(), err, cutHead(op))
	}
	if err != nil {
		return op.Content
	}
	return fmt.Sprintf("[trimmed: this result was %d bytes; the full text is in %s (use Read). It begins:]\n%s\n[…]",
		op.Len(), path, cutHead(op))
}

// cutHead is the start of a result that stays in view: the same whether
// op is whole or partial, as a partial op holds headSize bytes at least.
func cutHead(op *store.Op) string {
	head := op.Content
	if op.Len() > headSize {
		head = head[:min(headSize, len(head))]
		for len(head) > 0 && head[len(head)-1]&0xC0 == 0x80 { // do not cut a UTF-8 sequence
			head = head[:len(head)-1]
		}
		if len(head) > 0 && head[len(head)-1] >= 0xC0 {
			head = head[:len(head)-1]
		}
	}
	return head
}
