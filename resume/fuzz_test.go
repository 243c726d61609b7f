package resume

import (
	"testing"

	"github.com/flower-run/flower/store"
)

// FuzzSession plans arbitrary histories: Session never panics, and a plan
// it returns is coherent (DESIGN §5: any entry sequence).
func FuzzSession(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5})
	f.Add([]byte{0, 1, 17, 2, 3, 9, 4})
	f.Add([]byte{0, 1, 2, 2, 3, 3, 6, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Session(history(data))
		if err != nil {
			return
		}
		if (p.Ended && len(p.Pending) > 0) || (p.Handoff != nil && (p.Ended || len(p.Pending) > 0)) {
			t.Fatalf("incoherent plan %+v", p)
		}
		for _, c := range p.Pending {
			if p.Last == nil || c.Runs < 0 {
				t.Fatalf("pending call %v without a response", c)
			}
		}
	})
}

// history turns bytes into entries: each byte picks a kind (high bits)
// and an op id (low bits); some picks are malformed on purpose.
func history(data []byte) []store.Entry {
	var es []store.Entry
	for _, b := range data {
		id := string(rune('a' + b%3))
		switch b / 3 % 12 {
		case 0:
			es = append(es, user("u"))
		case 1:
			es = append(es, asst(id, string(rune('a'+(b+1)%3))))
		case 2:
			es = append(es, asst())
		case 3:
			es = append(es, started(id))
		case 4:
			es = append(es, attempt(id))
		case 5:
			es = append(es, result(id))
		case 6:
			es = append(es, text(store.KindAPIError, id))
		case 7:
			es = append(es, text(store.KindInterrupt, id[:b%2]))
		case 8:
			es = append(es, handoff(id, "doc"))
		case 9:
			es = append(es, text(store.KindNote, id))
		case 10:
			es = append(es, store.Entry{Kind: store.KindResult}) // malformed
		default:
			es = append(es, store.Entry{Kind: "future"})
		}
	}
	return es
}
