package flower

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flower-run/flower/config"
	"github.com/flower-run/flower/store"
	"github.com/flower-run/flower/workflow/starter"
)

// Banner is the one line a wake of ws starts with (R3.12), on the
// terminal and on flower serve's page alike: where it starts, or what it
// continues (a cut run and where it stopped, the brief, the goals, the
// work step's context size, the wake's number).
func Banner(ctx context.Context, s store.Store, ws string, st starter.State, cut *store.Run) string {
	if !st.Waking && len(st.Steps) == 0 && cut == nil {
		return "-> starting in " + Tilde(ws)
	}
	parts := []string{}
	if cut != nil {
		parts = append(parts, "finishing run "+cut.ID+" at "+cutStep(cut))
	}
	if st.Waking {
		parts = append(parts, "brief confirmed")
	}
	if st.Checks > 0 {
		parts = append(parts, fmt.Sprintf("%d goals", st.Checks))
	}
	if c := LastContext(ctx, s, ws, st.Steps["work"]); c > 0 {
		parts = append(parts, "work context "+kilo(c))
	}
	parts = append(parts, fmt.Sprintf("wake %d", st.Woke+1))
	return "<- continuing in " + Tilde(ws) + "  " + strings.Join(parts, " · ")
}

// cutStep names where a cut run stopped.
func cutStep(r *store.Run) string {
	if r.Row != "" {
		return r.Row
	}
	return "step " + fmt.Sprint(len(r.Done)+1)
}

// kilo renders a token count as 80.2K.
func kilo(n int) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%.1fK", float64(n)/1000)
}

// InstructionsNote names the instruction files in force in ws, for the
// banner's second line; "" when there are none. Files in ws are named
// relative to it, the others with ~ for the home.
func InstructionsNote(ws string) string {
	ins := config.Instructions(ws)
	if len(ins) == 0 {
		return ""
	}
	names := make([]string, len(ins))
	for i, in := range ins {
		names[i] = Tilde(in.Path)
		if strings.HasPrefix(in.Path, config.UserDir()+string(filepath.Separator)) {
			continue
		}
		if rel, err := filepath.Rel(ws, in.Path); err == nil && !strings.HasPrefix(rel, "..") {
			names[i] = rel
		}
	}
	return "\n   instructions: " + strings.Join(names, ", ")
}
