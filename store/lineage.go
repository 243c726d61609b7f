package store

// LineageOf builds a thread's lineage from its bindings in commit order: the
// newest binding of a step is current, the sessions it replaced are
// retired, oldest first. Backends share it so that they agree.
func LineageOf(workspace string, thread, woke int, bindings []Binding) Lineage {
	l := Lineage{Workspace: workspace, Thread: thread, Woke: woke, Steps: map[string]string{}}
	for _, b := range bindings {
		old, ok := l.Steps[b.Step]
		if ok && old == b.Session {
			continue
		}
		if ok {
			if l.Retired == nil {
				l.Retired = map[string][]string{}
			}
			l.Retired[b.Step] = append(l.Retired[b.Step], old)
		}
		l.Steps[b.Step] = b.Session
	}
	return l
}
