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
	// and returns its path. When it fails the result stays whole.
	Spill func(op *store.Op) (string, error)
}

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
	if err != nil {
		return op.Content
	}
	head := op.Content
	if len(head) > headSize {
		head = head[:headSize]
		for len(head) > 0 && head[len(head)-1]&0xC0 == 0x80 { // do not cut a UTF-8 sequence
			head = head[:len(head)-1]
		}
		if len(head) > 0 && head[len(head)-1] >= 0xC0 {
			head = head[:len(head)-1]
		}
	}
	return fmt.Sprintf("[trimmed: this result was %d bytes; the full text is in %s (use Read). It begins:]\n%s\n[…]",
		len(op.Content), path, head)
}
