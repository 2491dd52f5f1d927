package livelog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"sort"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// ReadOptions select entries for [Log.Read]. Zero fields do not filter.
type ReadOptions struct {
	// Last is how many of the newest matching entries to return (0: all).
	Last int
	// From keeps the entries written by this agent.
	From    string
	Channel string
	Kind    string
	// Since keeps entries at or after this time.
	Since time.Time
}

func (o ReadOptions) filtered() bool {
	return o.From != "" || o.Channel != "" || o.Kind != "" || !o.Since.IsZero()
}

// match reports whether e passes the filters. Hand-typed text has no agent,
// channel or time, so it shows only in unfiltered reads. Torn records are
// never shown.
func (o ReadOptions) match(e *Entry) bool {
	switch {
	case e.Torn:
		return false
	case e.Hand:
		return !o.filtered()
	case o.From != "" && e.Agent != o.From,
		o.Channel != "" && norm.NFC.String(e.Channel) != norm.NFC.String(o.Channel),
		o.Kind != "" && norm.NFC.String(e.Kind) != norm.NFC.String(o.Kind),
		!o.Since.IsZero() && e.Time.Before(o.Since):
		return false
	}
	return true
}

// Read returns the matching entries, oldest first. With Last set it reads
// the segments backwards in growing chunks, so the cost depends on how far
// back the matches are, not on the size of the log.
func (l *Log) Read(o ReadOptions) ([]Entry, error) {
	segs, err := l.segments()
	if err != nil {
		return nil, err
	}
	var out []Entry // newest segment first, each segment's entries in order
	for i := len(segs) - 1; i >= 0; i-- {
		seg := segs[i]
		if !o.Since.IsZero() && seg < SegmentName(o.Since) {
			break
		}
		need := 0
		if o.Last > 0 {
			need = o.Last - len(out)
		}
		got, err := l.readBack(seg, o, need)
		if err != nil {
			return nil, err
		}
		out = append(got, out...)
		if o.Last > 0 && len(out) >= o.Last {
			out = out[len(out)-o.Last:]
			break
		}
	}
	return out, nil
}

// readBack returns the last need matching entries of seg (all if need is
// 0), reading the file from the end in chunks that grow fourfold.
func (l *Log) readBack(seg string, o ReadOptions, need int) ([]Entry, error) {
	f, err := os.Open(l.abs(seg))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", seg, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	chunk := int64(64 << 10)
	if need == 0 {
		chunk = size
	}
	for {
		from := max(0, size-chunk)
		data := make([]byte, size-from)
		if _, err := f.ReadAt(data, from); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read %s: %w", seg, err)
		}
		start := 0
		if from > 0 {
			start = firstHeader(data)
		}
		var got []Entry
		if start >= 0 {
			line := 0
			if from == 0 {
				line = 1
			}
			p := newParser(data[start:], from+int64(start), line, streamLive, seg)
			for {
				e, ok := p.next()
				if !ok {
					break
				}
				if o.match(&e) {
					got = append(got, e)
				}
			}
		}
		if from == 0 || (need > 0 && len(got) >= need) {
			if need > 0 && len(got) > need {
				got = got[len(got)-need:]
			}
			if from > 0 {
				numberLines(f, seg, got)
			}
			return got, nil
		}
		chunk *= 4
	}
}

// firstHeader returns the offset of the first header line that starts after
// the first newline of data, or -1.
func firstHeader(data []byte) int {
	p := newParser(data, 0, 0, "", "")
	_, i, _ := p.peek(0)
	for i < len(data) {
		line, next, _ := p.peek(i)
		if k, _ := classify(line); k == kindHeader {
			return i
		}
		i = next
	}
	return -1
}

// numberLines fills in Line for entries read from the middle of a file; it
// counts newlines up to the first one, which costs a read of the file.
// Line numbers are for people; when the file is large (over 8 MiB before
// the first entry) they are left 0 to keep reads cheap.
func numberLines(f *os.File, seg string, es []Entry) {
	if len(es) == 0 || es[0].Offset > 8<<20 {
		for i := range es {
			es[i].Line = 0
		}
		return
	}
	buf := make([]byte, es[len(es)-1].Offset)
	if _, err := f.ReadAt(buf, 0); err != nil {
		return
	}
	line, at := 1, int64(0)
	for i := range es {
		for ; at < es[i].Offset; at++ {
			if buf[at] == '\n' {
				line++
			}
		}
		es[i].Line = line
	}
}

// Cursor is an agent's read position in the live log.
type Cursor struct {
	pos
	// Time is the time of the last entry read through, used to place the
	// cursor again if the log was edited before it.
	Time time.Time `json:"time"`
}

func cursorPath(agent string) string { return cursorsDir + "/" + agent + ".json" }

func (l *Log) loadCursor(agent string) (Cursor, error) {
	var c Cursor
	err := readJSON(l.abs(cursorPath(agent)), &c)
	if errors.Is(err, fs.ErrNotExist) {
		return Cursor{}, nil
	}
	if err != nil {
		// A damaged cursor file: fall back to the start, losing nothing.
		l.opts.Logger.Warn("live log: unreadable cursor, reading from the start", "agent", agent, "err", err)
		return Cursor{}, nil
	}
	return c, nil
}

// place returns where agent's unread entries start: the cursor if the file
// still has the same bytes before it, else the end of the entry whose chain
// hash the cursor recorded, else the first entry after the cursor's time,
// else the start of the log.
func (l *Log) place(c Cursor, segs []string) (pos, error) {
	if c.Segment == "" || l.valid(c.pos) {
		return c.pos, nil
	}
	l.opts.Logger.Info("live log: file changed before the cursor; rescanning", "segment", c.Segment)
	var byHash, byTime *pos
	for _, seg := range segs {
		data, err := os.ReadFile(l.abs(seg))
		if err != nil {
			return pos{}, fmt.Errorf("read %s: %w", seg, err)
		}
		p := newParser(data, 0, 0, streamLive, seg)
		prevEnd := int64(0)
		for {
			e, ok := p.next()
			if !ok {
				break
			}
			if e.Signed && e.Hash == c.Head {
				byHash = &pos{Segment: seg, Offset: e.End}
			}
			if byTime == nil && !c.Time.IsZero() && e.Time.After(c.Time) {
				byTime = &pos{Segment: seg, Offset: prevEnd}
			}
			prevEnd = e.End
		}
	}
	switch {
	case byHash != nil:
		return *byHash, nil
	case byTime != nil:
		return *byTime, nil
	}
	return pos{}, nil
}

// unread parses everything after agent's cursor. It returns the complete
// blocks (own entries included) and the position after the last of them.
func (l *Log) unread(agent string) ([]Entry, Cursor, error) {
	if err := identity.ValidName(agent); err != nil {
		return nil, Cursor{}, err
	}
	c, err := l.loadCursor(agent)
	if err != nil {
		return nil, c, err
	}
	segs, err := l.segments()
	if err != nil {
		return nil, c, err
	}
	at, err := l.place(c, segs)
	if err != nil {
		return nil, c, err
	}
	var out []Entry
	through, err := l.scan(segs, at, func(e *Entry) error {
		out = append(out, *e)
		return nil
	})
	if through.Time.IsZero() {
		through.Time = c.Time
	}
	if through.Head == "" {
		through.Head = c.Head
	}
	return out, through, err
}

// scan parses every block from at to the end of the log, in bounded
// memory, calling fn for each in order and holding back a possibly
// half-written last record. through is the end of the last block passed.
func (l *Log) scan(segs []string, at pos, fn func(*Entry) error) (Cursor, error) {
	through := Cursor{pos: pos{Segment: at.Segment, Offset: at.Offset}}
	i := 0
	if at.Segment != "" {
		i = sort.SearchStrings(segs, at.Segment)
	}
	for ; i < len(segs); i++ {
		seg := segs[i]
		off := int64(0)
		if seg == at.Segment {
			off = at.Offset
		}
		st, err := os.Stat(l.abs(seg))
		if err != nil {
			return through, err
		}
		if st.Size() < off {
			return through, fmt.Errorf("%s is shorter than the cursor: %w", seg, ErrCorrupt)
		}
		err = l.walk(context.Background(), seg, off, st.Size(), 0, streamLive, i == len(segs)-1, func(e *Entry) error {
			through.Segment, through.Offset = seg, e.End
			if e.Signed {
				through.Head = e.Hash
			}
			if !e.Time.IsZero() {
				through.Time = e.Time
			}
			return fn(e)
		})
		if err != nil {
			return through, err
		}
	}
	return through, nil
}

// inProgress reports whether e, parsed from data (which starts at file
// offset base), may be a record that is still being written: a torn or
// unsigned entry with nothing but white space after it. A reader may see
// part of a concurrent write, so such a block is held back until something
// follows it (a person's unsigned entry in the entry format is then shown
// once the next entry lands).
func inProgress(e *Entry, data []byte, base int64) bool {
	if !e.Torn && (e.Signed || e.Hand) {
		return false
	}
	return len(bytes.TrimSpace(data[e.End-base:])) == 0
}

func readFrom(path string, off int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() < off {
		return nil, fmt.Errorf("%s is shorter than the cursor: %w", path, ErrCorrupt)
	}
	data := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(data, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return data, nil
}

// unreadFor keeps what agent has not read: everything but its own entries
// and torn records.
func unreadFor(agent string, all []Entry) []Entry {
	var out []Entry
	for _, e := range all {
		if e.Torn || (e.Agent == agent && !e.Hand) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Unread returns the entries after agent's cursor, oldest first: other
// agents' entries and hand-typed text. An agent's own entries never count
// as unread for itself. The cost is proportional to what is new, unless a
// person changed the file before the cursor (then one scan re-places it).
// An agent without a cursor has read nothing: the whole log is unread.
func (l *Log) Unread(agent string) ([]Entry, error) {
	all, _, err := l.unread(agent)
	return unreadFor(agent, all), err
}

// unreadTail returns the newest n entries unread for agent (oldest first)
// and how many are unread in all, keeping only n entries in memory.
func (l *Log) unreadTail(agent string, n int) ([]Entry, int, error) {
	if err := identity.ValidName(agent); err != nil {
		return nil, 0, err
	}
	c, err := l.loadCursor(agent)
	if err != nil {
		return nil, 0, err
	}
	segs, err := l.segments()
	if err != nil {
		return nil, 0, err
	}
	at, err := l.place(c, segs)
	if err != nil {
		return nil, 0, err
	}
	ring := make([]Entry, max(n, 0)) // ring[total%n] is the next slot
	total := 0
	_, err = l.scan(segs, at, func(e *Entry) error {
		if e.Torn || (e.Agent == agent && !e.Hand) {
			return nil
		}
		if n > 0 {
			ring[total%n] = *e
		}
		total++
		return nil
	})
	if err != nil || n <= 0 {
		return nil, total, err
	}
	if total < n {
		return ring[:total], total, nil
	}
	k := total % n
	return append(ring[k:], ring[:k]...), total, nil
}

// ReadUnread is [Log.Unread] that, with ack, also moves agent's cursor past
// everything it parsed (its own entries too), in one step.
//
// With ack, reading and moving the cursor happen under the agent's cursor
// lock, so two sessions of one agent reading at once each get different
// entries: every entry is delivered once per agent.
func (l *Log) ReadUnread(agent string, ack bool) ([]Entry, error) {
	if !ack {
		return l.Unread(agent)
	}
	if err := identity.ValidName(agent); err != nil {
		return nil, err
	}
	unlock, err := l.v.Lock(cursorLock(agent))
	if err != nil {
		return nil, err
	}
	defer unlock()
	all, through, err := l.unread(agent)
	if err != nil {
		return nil, err
	}
	if len(all) > 0 {
		if err := l.saveCursorLocked(agent, through); err != nil {
			return nil, err
		}
	}
	return unreadFor(agent, all), nil
}

func cursorLock(agent string) string { return "livelog-cursor-" + agent }

// unreadCount is a running count of agent's unread entries, so that
// UnreadCount, called after every MCP tool call, parses only what was
// appended since the last call.
type unreadCount struct {
	cursor  pos // the cursor the count is for
	resume  pos // start of the last block seen: parsing goes on from here
	total   int // blocks before resume
	byAgent map[string]int
}

// UnreadCount returns how many entries are unread for agent, in total and by
// author (hand-typed text counts under ""). It is cheap enough to call after
// every tool call: the cost is proportional to what is new, and a [Log]
// remembers its last count per agent, so repeated calls only parse what was
// appended in between.
func (l *Log) UnreadCount(agent string) (total int, byAgent map[string]int, err error) {
	if err := identity.ValidName(agent); err != nil {
		return 0, nil, err
	}
	c, err := l.loadCursor(agent)
	if err != nil {
		return 0, nil, err
	}
	segs, err := l.segments()
	if err != nil {
		return 0, nil, err
	}
	l.countMu.Lock()
	prev := l.counts[agent]
	l.countMu.Unlock()
	var cc unreadCount
	if prev != nil && prev.cursor == c.pos && l.valid(prev.resume) {
		cc = *prev
	} else {
		at, err := l.place(c, segs)
		if err != nil {
			return 0, nil, err
		}
		cc = unreadCount{cursor: c.pos, resume: at}
		if seg := segOr(at.Segment, segs); seg != "" {
			if f, err := os.Open(l.abs(seg)); err == nil {
				cc.resume.Segment = seg
				cc.resume.Anchor, _ = anchorAt(f, at.Offset)
				f.Close()
			}
		}
	}
	cc.byAgent = maps.Clone(cc.byAgent)
	if cc.byAgent == nil {
		cc.byAgent = map[string]int{}
	}
	// Count as we go; the last block is counted in the answer but not in
	// the running count, and parsing resumes at it next time: a person may
	// still be typing into it.
	byAgent = maps.Clone(cc.byAgent)
	total = cc.total
	var last *Entry
	counts := func(e *Entry) bool { return !e.Torn && !(e.Agent == agent && !e.Hand) }
	_, err = l.scan(segs, cc.resume, func(e *Entry) error {
		if last != nil && counts(last) {
			cc.total++
			cc.byAgent[last.Agent]++
		}
		if counts(e) {
			total++
			byAgent[e.Agent]++
		}
		c := *e
		last = &c
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	if last != nil {
		if f, err := os.Open(l.abs(last.Segment)); err == nil {
			if a, err := anchorAt(f, last.Offset); err == nil {
				cc.resume = pos{Segment: last.Segment, Offset: last.Offset, Anchor: a}
			}
			f.Close()
		}
	}
	l.countMu.Lock()
	l.counts[agent] = &cc
	l.countMu.Unlock()
	return total, byAgent, nil
}

// segOr returns seg, or the first segment if seg is "" (the start of the
// log).
func segOr(seg string, segs []string) string {
	if seg == "" && len(segs) > 0 {
		return segs[0]
	}
	return seg
}

// Ack moves agent's cursor to just after through, an entry returned by
// [Log.Unread] or [Log.Read]. The cursor never moves back: acknowledging an
// older entry than the cursor is a no-op.
func (l *Log) Ack(agent string, through Entry) error {
	if err := identity.ValidName(agent); err != nil {
		return err
	}
	if !isSegment(through.Segment) || through.End <= 0 {
		return fmt.Errorf("ack: entry has no position in the log: %w", vault.ErrInvalid)
	}
	c := Cursor{pos: pos{Segment: through.Segment, Offset: through.End, Head: through.Hash}, Time: through.Time}
	return l.saveCursor(agent, c)
}

func (l *Log) saveCursor(agent string, c Cursor) error {
	unlock, err := l.v.Lock(cursorLock(agent))
	if err != nil {
		return err
	}
	defer unlock()
	return l.saveCursorLocked(agent, c)
}

// saveCursorLocked writes agent's cursor unless it would move it back. The
// caller holds the agent's cursor lock.
func (l *Log) saveCursorLocked(agent string, c Cursor) error {
	old, err := l.loadCursor(agent)
	if err != nil {
		return err
	}
	if old.Segment != "" && l.valid(old.pos) &&
		(old.Segment > c.Segment || old.Segment == c.Segment && old.Offset >= c.Offset) {
		return nil
	}
	f, err := os.Open(l.abs(c.Segment))
	if err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	c.Anchor, err = anchorAt(f, c.Offset)
	f.Close()
	if err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	if c.Head == "" {
		c.Head = old.Head
	}
	path := l.abs(cursorPath(agent))
	if err := os.MkdirAll(l.abs(cursorsDir), 0o755); err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	data, err := jsonIndent(c)
	if err != nil {
		return err
	}
	return vault.WriteFile(path, data, 0o644)
}

// Follow calls fn with each entry appended after the call, in order, until
// ctx is done (then it returns nil) or fn returns an error. It polls every
// Options.PollInterval and runs in the caller's goroutine.
func (l *Log) Follow(ctx context.Context, fn func(Entry) error) error {
	segs, err := l.segments()
	if err != nil {
		return err
	}
	var at pos
	if len(segs) > 0 {
		at.Segment = segs[len(segs)-1]
		if st, err := os.Stat(l.abs(at.Segment)); err == nil {
			at.Offset = st.Size()
		}
	}
	tick := time.NewTicker(l.opts.PollInterval)
	defer tick.Stop()
	for {
		segs, err := l.segments()
		if err != nil {
			return err
		}
		for _, seg := range segs {
			if seg < at.Segment {
				continue
			}
			if seg > at.Segment {
				at = pos{Segment: seg}
			}
			data, err := readFrom(l.abs(seg), at.Offset)
			if err != nil {
				// The file shrank (a person cut it): follow from its end.
				if st, serr := os.Stat(l.abs(seg)); serr == nil {
					at.Offset = st.Size()
				}
				continue
			}
			p := newParser(data, at.Offset, 0, streamLive, seg)
			base := at.Offset
			for {
				e, ok := p.next()
				if !ok {
					break
				}
				if seg == segs[len(segs)-1] && inProgress(&e, data, base) {
					break // possibly still being written
				}
				at.Offset = e.End
				if e.Torn {
					continue
				}
				if err := fn(e); err != nil {
					return err
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
