package human

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flower-run/flower/internal/atomicfile"
	"github.com/flower-run/flower/internal/failpoint"
)

// amendHeader opens the part of the brief that holds what the person said
// mid-run. It is written once, before the first message, so the brief's
// own sections stay as the clarify step wrote them.
const amendHeader = "## Said by the person during the run"

// appendQA records a settled ask in the Q&A log:
//
//	### 2006-01-02 15:04:05 — question
//
//	Options: a | b
//	State: answered (waited 12s)
//
//	> answer
func (c *Channel) appendQA(a Ask, s settlement, waited time.Duration) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s — %s\n\n", a.Asked.Format(time.DateTime), heading(a.Question))
	if len(a.Options) > 0 {
		fmt.Fprintf(&b, "Options: %s\n", strings.Join(a.Options, " | "))
	}
	fmt.Fprintf(&b, "State: %s", s.state)
	if s.state == Answered || s.state == Declined || s.state == Timeout {
		fmt.Fprintf(&b, " (waited %s)", waited.Round(time.Second))
	}
	b.WriteString("\n")
	if s.text != "" {
		b.WriteString("\n" + quote(s.text))
	}
	b.WriteString("\n")
	c.fileMu.Lock()
	defer c.fileMu.Unlock()
	return appendFile(c.qaLog, b.String())
}

// appendAmend adds one message to the brief under a dated line, opening the
// mid-run section first if the brief has none yet. Appending, never
// rewriting: the original request is history worth keeping.
func (c *Channel) appendAmend(m mail) error {
	c.fileMu.Lock()
	defer c.fileMu.Unlock()
	has, err := hasLine(c.amend, amendHeader)
	if err != nil {
		return err
	}
	var b strings.Builder
	if !has {
		b.WriteString("\n" + amendHeader + "\n")
	}
	fmt.Fprintf(&b, "\n%s:\n\n%s", m.at.Format(time.DateTime), quote(m.text))
	return appendFile(c.amend, b.String())
}

// heading keeps a question on one line, as a Markdown heading must be.
func heading(q string) string {
	if q = strings.Join(strings.Fields(q), " "); q != "" {
		return q
	}
	return "(no question)"
}

// quote block-quotes text so a person's "## ..." line cannot break the
// structure of the file it lands in.
func quote(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(strings.TrimRight("> "+line, " ") + "\n")
	}
	return b.String()
}

// hasLine reports whether the file holds a line equal to line; a missing
// file holds none.
func hasLine(path, line string) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	for l := range strings.Lines(string(data)) {
		if strings.TrimRight(l, "\r\n") == line {
			return true, nil
		}
	}
	return false, nil
}

// appendFile appends text durably: O_APPEND so concurrent writers never
// overwrite each other, fsync before returning, and an fsync of the
// directory when the file is new so it survives a crash too.
func appendFile(path, text string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create dir: %w", err)
	}
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("append to %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	failpoint.Durable("fsync " + filepath.Base(path) + " (append)")
	if created {
		if err := atomicfile.SyncDir(dir); err != nil {
			return err
		}
		failpoint.Durable("fsync dir of " + filepath.Base(path))
	}
	return nil
}
