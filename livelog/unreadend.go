package livelog

// UnreadEnd returns up to n of agent's unread entries from one end of what
// is unread — the oldest (oldest true) or the newest — oldest first, and
// how many entries are unread in all. Nothing is acknowledged (see
// [Log.Ack]). Memory is bounded by n entries however many are unread, so
// a session start for an agent that never acknowledged a million-entry
// log stays small; the time is that of reading what is unread.
func (l *Log) UnreadEnd(agent string, n int, oldest bool) ([]Entry, int, error) {
	n = max(n, 0)
	if oldest {
		out := []Entry{}
		total, err := l.eachUnread(agent, false, n, func(e Entry) error { out = append(out, e); return nil })
		return out, total, err
	}
	ring := make([]Entry, 0, min(n, 1024))
	at := 0 // the oldest entry once the ring is full
	total, err := l.EachUnread(agent, false, func(e Entry) error {
		switch {
		case n == 0:
		case len(ring) < n:
			ring = append(ring, e)
		default:
			ring[at] = e
			at = (at + 1) % n
		}
		return nil
	})
	if err != nil {
		return nil, total, err
	}
	return append(append([]Entry{}, ring[at:]...), ring[:at]...), total, nil
}
