package livelog

import (
	"fmt"
	"strings"
)

// UnreadEnd returns up to n of agent's unread entries from one end of what
// is unread — the oldest (oldest true) or the newest — oldest first, and
// how many entries are unread in all. Nothing is acknowledged (see
// [Log.Ack]). Memory is bounded by n entries however many are unread, so
// a session start for an agent that never acknowledged a million-entry
// log stays small; the time is that of reading what is unread.
//
// A log file that cannot be read (its permissions, an I/O error) does not
// cost the agent the rest: UnreadEnd then returns what the other files
// hold, with an [*UnreadableError] naming the files left out.
func (l *Log) UnreadEnd(agent string, n int, oldest bool) ([]Entry, int, error) {
	n = max(n, 0)
	var unreadable UnreadableError
	if oldest {
		out := []Entry{}
		total, err := l.eachUnread(agent, false, n, func(e Entry) error { out = append(out, e); return nil }, &unreadable)
		if err != nil {
			return nil, total, err
		}
		return out, total, unreadable.orNil()
	}
	ring := make([]Entry, 0, min(n, 1024))
	at := 0 // the oldest entry once the ring is full
	total, err := l.eachUnread(agent, false, -1, func(e Entry) error {
		switch {
		case n == 0:
		case len(ring) < n:
			ring = append(ring, e)
		default:
			ring[at] = e
			at = (at + 1) % n
		}
		return nil
	}, &unreadable)
	if err != nil {
		return nil, total, err
	}
	return append(append([]Entry{}, ring[at:]...), ring[:at]...), total, unreadable.orNil()
}

// UnreadableError names the log files a read left out because they could
// not be read; what the other files hold was read.
type UnreadableError struct {
	Files []string // vault-relative paths, in log order
	Errs  []error  // why, one per file
}

func (e *UnreadableError) add(rel string, err error) {
	e.Files = append(e.Files, rel)
	e.Errs = append(e.Errs, err)
}

func (e *UnreadableError) orNil() error {
	if len(e.Files) == 0 {
		return nil
	}
	return e
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("cannot read %s: %v", strings.Join(e.Files, ", "), e.Errs[0])
}

// Unwrap returns the errors of every file left out.
func (e *UnreadableError) Unwrap() []error { return e.Errs }
