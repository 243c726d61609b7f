package postgres

// PauseHeartbeat stops the heartbeat stamps of l's session (all the
// leases of its DB) until resume is called: a
// holder that stopped showing signs of life, in process.
func PauseHeartbeat(l *Lease) (resume func()) {
	l.s.paused.Store(true)
	return func() { l.s.paused.Store(false) }
}
