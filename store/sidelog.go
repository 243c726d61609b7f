package store

// Side logs are keys of a workspace, beside its sessions, that no agent
// talks in: the human channel's journal, the event stream, the grants,
// the kept notes. Their ids start with "~", which no session id (a UUID)
// does, so they never collide with a session; they hold entries and no
// Meta, so flower sessions does not list them. The ids are defined here
// once; SideLog makes a side log's key.
const (
	// HumanJournal keeps the human channel's asks, answers and mail
	// (package human), so they outlive the process.
	HumanJournal = "~human"
	// EventLog is the stream of events flower serve shows (Event): one
	// per workspace, numbered on across wakes and restarts, so a page
	// resumes by its last seq.
	EventLog = "~events"
	// Grants keeps the ask rules a person allowed for a workflow run
	// (agent).
	Grants = "~grants"
	// notes is the prefix of the kept copies of the workbench's notes.
	notes = "~notes/"
)

// SideLog is the store key of workspace's side log id (HumanJournal,
// EventLog, Grants, Notes(...)).
func SideLog(workspace, id string) string { return SessionKey(workspace, id) }

// Notes is the side log id of the kept copy of the workbench's note rel.
func Notes(rel string) string { return notes + rel }

// InboundChannel is the notification channel (PostgreSQL NOTIFY) on
// which a process says it put a record in a workspace's HumanJournal for
// its driver (an answer, mail, an interrupt): the payload is the
// journal's key, and the driver listens on it.
const InboundChannel = "flower_inbound"
