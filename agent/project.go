package agent

import "strings"

// projectInstructions reads the project's standing instructions for a Run
// that starts now; "" without Options.Instructions.
func (r *Runtime) projectInstructions() string {
	if r.project == nil {
		return ""
	}
	return strings.TrimSpace(r.project())
}
