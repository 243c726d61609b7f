package term

import (
	"sync"
	"time"

	"github.com/flower-run/flower/human"
)

// OfferWindow is how long before a question a line typed as a note is
// still offered as its answer: the person saw the question coming, or
// answered what the agent just said, and the question showed a moment
// later.
const OfferWindow = 15 * time.Second

// Offer keeps the line sent last, to offer it as the answer of a question
// that appears shortly after (R10.3): the question shows it and Enter
// confirms. Its methods are safe from any goroutine; a nil Offer offers
// nothing.
type Offer struct {
	Now func() time.Time // nil: time.Now

	mu   sync.Mutex // guards the rest
	line string
	at   time.Time
	ask  string // the question it is offered to
}

func (o *Offer) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Offer) sent(line string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.line, o.at, o.ask = line, o.now(), ""
	o.mu.Unlock()
}

// For returns the line to offer as the answer of a question just asked:
// the last one sent, if it was sent within OfferWindow before the
// question. The offer then stands for that question until the next line.
func (o *Offer) For(a human.Ask) (string, bool) {
	if o == nil {
		return "", false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	asked := a.Asked
	if asked.IsZero() {
		asked = o.now()
	}
	if o.line == "" || asked.Sub(o.at) > OfferWindow || asked.Before(o.at.Add(-time.Second)) {
		return "", false
	}
	o.ask = a.ID
	return o.line, true
}

// confirm answers the question the offer stands for with the offered line
// (an Enter after the offer); it does nothing without an offer.
func (o *Offer) confirm(ch Channel) {
	if o == nil {
		return
	}
	o.mu.Lock()
	line, ask := o.line, o.ask
	o.line, o.ask = "", ""
	o.mu.Unlock()
	if ask == "" {
		return
	}
	for _, a := range ch.Pending() {
		if a.ID != ask {
			continue
		}
		// The answer now, not a note too: taken back before the answer
		// lets the agent go on to its next message boundary.
		u, ok := ch.(interface{ Unsend(string) bool })
		unsent := ok && u.Unsend(line)
		if !ch.Answer(a.ID, pickOption(a, line)) && unsent {
			ch.Send(line) // the question settled meanwhile: a note after all
		}
		return
	}
}
