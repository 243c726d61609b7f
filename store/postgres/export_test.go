package postgres

// PauseHeartbeat stops l's heartbeat stamps until resume is called: a
// holder that stopped showing signs of life, in process.
func PauseHeartbeat(l *Lease) (resume func()) {
	l.paused.Store(true)
	return func() { l.paused.Store(false) }
}
