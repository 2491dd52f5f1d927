package livelog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"
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

// Read returns the matching entries of every feed (and of an older
// vault's single chain), oldest first, in the log's one order (see
// [merge]). With Last set it reads each file backwards in growing chunks,
// so the cost depends on how far back the matches are, not on the size
// of the log.
func (l *Log) Read(o ReadOptions) ([]Entry, error) {
	files, err := l.liveFiles()
	if err != nil {
		return nil, err
	}
	var srcs []*source
	if o.Last > 0 {
		for _, lf := range files {
			if !o.Since.IsZero() && lf.month != "" && lf.month < o.Since.UTC().Format("2006-01") {
				continue
			}
			got, err := l.readBack(lf.rel, o, o.Last)
			if err != nil {
				return nil, err
			}
			if len(got) > 0 {
				srcs = append(srcs, &source{lf: lf, writer: lf.writer, mem: got})
			}
		}
	} else {
		for _, lf := range files {
			if !o.Since.IsZero() && lf.month != "" && lf.month < o.Since.UTC().Format("2006-01") {
				continue
			}
			it, err := l.openIter(lf.rel, streamLive, 0, false)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				closeSources(srcs)
				return nil, err
			}
			srcs = append(srcs, &source{lf: lf, writer: lf.writer, it: it})
		}
	}
	defer closeSources(srcs)
	cl := l.cleared()
	var out []Entry
	err = merge(context.Background(), srcs, func(e *Entry, _ *source) error {
		if o.match(e) {
			cl.apply(e)
			out = append(out, *e)
			if o.Last > 0 && len(out) > 4*o.Last {
				out = append(out[:0], out[len(out)-o.Last:]...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if o.Last > 0 && len(out) > o.Last {
		out = out[len(out)-o.Last:]
	}
	saw := sawSet{}
	for i := range out {
		saw.see(&out[i])
	}
	l.advance(files, saw)
	return out, nil
}

// readBack returns the last need matching blocks of a file (all if need is
// 0), reading it from the end in chunks that grow fourfold.
func (l *Log) readBack(rel string, o ReadOptions, need int) ([]Entry, error) {
	f, err := vault.OpenRead(l.abs(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", rel, err)
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
			return nil, fmt.Errorf("read %s: %w", rel, err)
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
			p := newParser(data[start:], from+int64(start), line, streamLive, rel)
			for {
				e, ok := p.next()
				if !ok {
					break
				}
				if inProgress(&e, data[start:], from+int64(start)) {
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
				numberLines(f, got)
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
		if k, _ := lineKindOf(line); k == kindHeader {
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
func numberLines(f *os.File, es []Entry) {
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
	rest := data[e.End-base:]
	for _, c := range rest {
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return false
		}
	}
	return true
}

// Cursor is an agent's read position on this machine: a position in every
// file of the log. It lives in .nexus/state/livelog/cursors/AGENT.json.
type Cursor struct {
	Version int                `json:"version"`
	Files   map[string]filePos `json:"files"`

	// The single position of an older vault's cursor, read and turned
	// into file positions.
	Segment string    `json:"segment,omitempty"`
	Offset  int64     `json:"offset,omitempty"`
	Head    string    `json:"head,omitempty"`
	Anchor  string    `json:"anchor,omitempty"`
	Time    time.Time `json:"time,omitzero"`
}

// filePos is where a reader is in one file: the end of the last block it
// read there, and that block's feed, seq and hash to place it again if
// the file was changed before it.
type filePos struct {
	Offset int64     `json:"offset"`
	Anchor string    `json:"anchor"`
	Writer string    `json:"writer,omitempty"`
	Seq    int64     `json:"seq,omitempty"`
	Hash   string    `json:"hash,omitempty"`
	Time   time.Time `json:"time,omitzero"`
}

func cursorPath(agent string) string { return cursorsDir + "/" + agent + ".json" }

func cursorLock(agent string) string { return "livelog-cursor-" + agent }

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
	for rel := range c.Files {
		if !isLogFile(rel) {
			delete(c.Files, rel)
		}
	}
	return c, nil
}

// place returns where a reader with position fp starts in file lf: fp
// itself if the file still has the same bytes before it; else, after the
// block with fp's hash, or after the last entry of fp's feed numbered up
// to fp's seq, or (an older single-chain segment) after fp's time; else
// the start of the file.
func (l *Log) place(lf logFile, fp filePos, stream string) (int64, error) {
	if fp.Offset == 0 {
		return 0, nil
	}
	if size, ok := l.validSize(pos{Segment: lf.rel, Offset: fp.Offset, Anchor: fp.Anchor}); ok && size >= fp.Offset {
		return fp.Offset, nil
	}
	l.opts.Logger.Info("live log: file changed before the cursor; placing it again", "file", lf.rel)
	data, err := vault.ReadFile(l.abs(lf.rel))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", lf.rel, err)
	}
	p := newParser(data, 0, 0, stream, lf.rel)
	var byHash, bySeq, byTime int64 = -1, -1, -1
	prevEnd := int64(0)
	for {
		e, ok := p.next()
		if !ok {
			break
		}
		switch {
		case fp.Hash != "" && e.Hash == fp.Hash:
			byHash = e.End
		case fp.Writer != "" && e.Writer == fp.Writer && e.Seq > 0 && e.Seq <= fp.Seq:
			bySeq = e.End
		}
		if byTime < 0 && !fp.Time.IsZero() && e.Time.After(fp.Time) {
			byTime = prevEnd
		}
		prevEnd = e.End
	}
	switch {
	case byHash >= 0:
		return byHash, nil
	case bySeq >= 0:
		return bySeq, nil
	case byTime >= 0 && lf.legacy:
		return byTime, nil
	}
	return 0, nil
}

// unreadSources opens every file of the log at agent's cursor. Entries
// already delivered through another file of the same feed (a conflict
// copy, a file restored from a backup) are skipped.
//
// With onErr set, a file that cannot be opened or read is left out (its
// position in the cursor is kept) and named to onErr, rather than failing
// the whole read.
func (l *Log) unreadSources(c Cursor, files []logFile, onErr func(rel string, err error)) ([]*source, error) {
	legacyCursor := c.Files == nil && c.Segment != ""
	known := map[string]int64{} // writer -> highest seq read in any file
	for _, fp := range c.Files {
		if fp.Writer != "" && fp.Seq > known[fp.Writer] {
			known[fp.Writer] = fp.Seq
		}
	}
	var srcs []*source
	for _, lf := range files {
		fp, have := c.Files[lf.rel]
		var off int64
		var err error
		switch {
		case legacyCursor && lf.legacy:
			switch {
			case lf.rel < c.Segment:
				if st, err := vault.Stat(l.abs(lf.rel)); err == nil {
					off = st.Size()
				}
			case lf.rel == c.Segment:
				off, err = l.place(lf, filePos{Offset: c.Offset, Anchor: c.Anchor, Hash: c.Head, Time: c.Time}, streamLive)
			}
		case have:
			off, err = l.place(lf, fp, streamLive)
		}
		if err != nil && onErr != nil {
			onErr(lf.rel, err)
			continue
		}
		if err != nil {
			closeSources(srcs)
			return nil, err
		}
		it, err := l.openIter(lf.rel, streamLive, off, true)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil && onErr != nil {
			onErr(lf.rel, err)
			continue
		}
		if err != nil {
			closeSources(srcs)
			return nil, err
		}
		s := &source{lf: lf, writer: lf.writer, it: it, end: off}
		if onErr != nil {
			rel := lf.rel
			s.onErr = func(err error) { onErr(rel, err) }
		}
		if !have && len(known) > 0 {
			s.skip = l.deliveredElsewhere(lf, known, files)
		}
		srcs = append(srcs, s)
	}
	return srcs, nil
}

// deliveredElsewhere returns a filter for a file the reader has no
// position in: signed entries of a feed the reader has read up to seq N,
// numbered up to N and present in the feed's other files, were delivered
// from there. (The hashes are loaded only if such an entry turns up.)
func (l *Log) deliveredElsewhere(lf logFile, known map[string]int64, files []logFile) func(*Entry) bool {
	var hashes map[string]bool
	return func(e *Entry) bool {
		if !e.Signed || !e.feed || e.Seq > known[e.Writer] {
			return false
		}
		if hashes == nil {
			hashes = map[string]bool{}
			for _, o := range files {
				if o.rel == lf.rel || o.legacy {
					continue
				}
				data, err := vault.ReadFile(l.abs(o.rel))
				if err != nil {
					continue
				}
				p := newParser(data, 0, 0, streamLive, o.rel)
				for {
					x, ok := p.next()
					if !ok {
						break
					}
					if x.Signed && x.Writer == e.Writer {
						hashes[x.Hash] = true
					}
				}
			}
		}
		return hashes[e.Hash]
	}
}

// positions returns the cursor after a merge over srcs.
func positions(old Cursor, srcs []*source) Cursor {
	c := Cursor{Version: 2, Files: map[string]filePos{}}
	for rel, fp := range old.Files {
		c.Files[rel] = fp
	}
	for _, s := range srcs {
		if !s.passed {
			continue
		}
		fp := c.Files[s.lf.rel]
		fp.Offset = s.end
		if s.lastT.Signed {
			fp.Writer, fp.Seq, fp.Hash, fp.Time = s.lastT.Writer, s.lastT.Seq, s.lastT.Hash, s.lastT.Time
		}
		c.Files[s.lf.rel] = fp
	}
	return c
}

// own reports whether e is agent's own entry on this machine: never
// unread for it.
func own(e *Entry, writer string) bool { return e.Signed && e.feed && e.Writer == writer || e.Torn }

// EachUnread calls fn, oldest first in the log's order, with every entry
// not yet acknowledged by agent on this machine: other agents' entries,
// the same agent's entries from other devices, and hand-typed text
// (never agent's own entries from this machine, never torn records).
// With ack, the cursor moves past everything read, under the agent's
// cursor lock, so two sessions of one agent get each entry once. Memory
// stays bounded however many entries are new. It returns how many entries
// fn got.
func (l *Log) EachUnread(agent string, ack bool, fn func(Entry) error) (int, error) {
	return l.eachUnread(agent, ack, -1, fn, nil)
}

// eachUnread is [Log.EachUnread] that, with limit >= 0, stops delivering
// (and acknowledging) after limit entries and counts the rest. With
// unreadable set, files that cannot be read are named there and left out
// instead of failing the read.
func (l *Log) eachUnread(agent string, ack bool, limit int, fn func(Entry) error, unreadable *UnreadableError) (int, error) {
	if err := identity.ValidName(agent); err != nil {
		return 0, err
	}
	writer, err := l.Writer(agent)
	if err != nil {
		return 0, err
	}
	if ack {
		unlock, err := l.v.Lock(cursorLock(agent))
		if err != nil {
			return 0, err
		}
		defer unlock()
	}
	c, err := l.loadCursor(agent)
	if err != nil {
		return 0, err
	}
	files, err := l.liveFiles()
	if err != nil {
		return 0, err
	}
	var onErr func(string, error)
	if unreadable != nil {
		onErr = unreadable.add
	}
	srcs, err := l.unreadSources(c, files, onErr)
	if err != nil {
		return 0, err
	}
	defer closeSources(srcs)
	cl := l.cleared()
	n := 0
	var through Cursor
	saw := sawSet{}
	stopped := false
	errStop := errors.New("stop")
	err = merge(context.Background(), srcs, func(e *Entry, s *source) error {
		if own(e, writer) {
			return nil
		}
		if limit >= 0 && n >= limit {
			if !stopped {
				// Positions just before this entry.
				s.end, s.lastT = e.Offset, s.prevT
				through, stopped = positions(c, srcs), true
				if !sharedWriter(srcs) {
					// No copies to pass once: the merge passes every
					// block of every file, so what is left is the
					// unread count from the cursor less what was
					// delivered, kept per file across calls (see
					// [Log.UnreadCount]) instead of parsed again here.
					total, _, err := l.countUnread(agent, writer, c, files)
					if err != nil {
						return err
					}
					n = max(total, n+1)
					return errStop
				}
				countOnly(srcs) // the rest is counted, not delivered
			}
			n++
			return nil
		}
		n++
		saw.see(e)
		cl.apply(e)
		return fn(*e)
	})
	l.advance(files, saw)
	if err != nil && !errors.Is(err, errStop) {
		return n, err
	}
	if !stopped {
		through = positions(c, srcs)
	}
	moved := false
	for _, s := range srcs {
		moved = moved || s.passed
	}
	if ack && moved {
		if err := l.saveCursorLocked(agent, through); err != nil {
			return n, err
		}
	}
	return n, nil
}

// sharedWriter reports whether two of srcs hold the same writer's feed
// (a conflict copy, a file restored from a backup): then a merge passes
// identical entries once, and counting each file on its own would count
// them twice.
func sharedWriter(srcs []*source) bool {
	seen := map[string]bool{}
	for _, s := range srcs {
		if s.writer == "" {
			continue
		}
		if seen[s.writer] {
			return true
		}
		seen[s.writer] = true
	}
	return false
}

// hasConflictCopy reports whether one of srcs is a sync tool's conflict
// copy: its writer is known only once its entries are parsed, and it
// holds entries of a feed that another file holds too.
func hasConflictCopy(srcs []*source) bool {
	for _, s := range srcs {
		if s.writer == "" && vault.IsConflictCopy(path.Base(s.lf.rel)) {
			return true
		}
	}
	return false
}

// Unread returns the entries agent has not acknowledged on this machine
// (see [Log.EachUnread]), oldest first. The cost is proportional to what
// is new. An agent without a cursor has read nothing: the whole log is
// unread (use [Log.EachUnread] to read that in bounded memory).
func (l *Log) Unread(agent string) ([]Entry, error) {
	return l.ReadUnread(agent, false)
}

// ReadUnread is [Log.Unread] that, with ack, also moves agent's cursor past
// everything it read, in one step, under the agent's cursor lock: every
// entry is delivered once per agent per machine.
func (l *Log) ReadUnread(agent string, ack bool) ([]Entry, error) {
	var out []Entry
	_, err := l.EachUnread(agent, ack, func(e Entry) error { out = append(out, e); return nil })
	return out, err
}

// ReadUnreadLimit returns at most limit unread entries (oldest first) and
// how many more wait; with ack the cursor moves past exactly the entries
// returned.
func (l *Log) ReadUnreadLimit(agent string, limit int, ack bool) ([]Entry, int, error) {
	var out []Entry
	n, err := l.eachUnread(agent, ack, max(limit, 0), func(e Entry) error { out = append(out, e); return nil }, nil)
	return out, n - len(out), err
}

// UnreadCount returns how many entries are unread for agent, in total and by
// author (hand-typed text counts under ""). It is cheap enough to call after
// every tool call: the cost is proportional to what is new since the
// cursor, and a [Log] remembers its last count per file, so repeated calls
// only parse what was appended in between.
func (l *Log) UnreadCount(agent string) (total int, byAgent map[string]int, err error) {
	if err := identity.ValidName(agent); err != nil {
		return 0, nil, err
	}
	writer, err := l.Writer(agent)
	if err != nil {
		return 0, nil, err
	}
	c, err := l.loadCursor(agent)
	if err != nil {
		return 0, nil, err
	}
	files, err := l.liveFiles()
	if err != nil {
		return 0, nil, err
	}
	return l.countUnread(agent, writer, c, files)
}

// countUnread is [Log.UnreadCount] for agent (writing as writer) with
// cursor c over files.
func (l *Log) countUnread(agent, writer string, c Cursor, files []logFile) (total int, byAgent map[string]int, err error) {
	byAgent = map[string]int{}
	l.countMu.Lock()
	if l.countBusy == nil {
		l.countBusy = map[string]*sync.Mutex{}
	}
	busy := l.countBusy[agent]
	if busy == nil {
		busy = &sync.Mutex{}
		l.countBusy[agent] = busy
	}
	l.countMu.Unlock()
	busy.Lock()
	defer busy.Unlock()
	l.countMu.Lock()
	cache := l.counts[agent]
	if cache == nil {
		cache = map[string]*fileCount{}
		l.counts[agent] = cache
	}
	l.countMu.Unlock()
	srcs, err := l.unreadSources(c, files, nil)
	if err != nil {
		return 0, nil, err
	}
	defer closeSources(srcs)
	countOnly(srcs)
	if sharedWriter(srcs) || hasConflictCopy(srcs) {
		// One feed in two files (a conflict copy, a restored backup):
		// counted file by file, the entries both hold would count twice.
		// The merge passes them once; nothing is cached for these files.
		err := merge(context.Background(), srcs, func(e *Entry, _ *source) error {
			if !own(e, writer) {
				total++
				byAgent[e.Agent]++
			}
			return nil
		})
		return total, byAgent, err
	}
	// Each file is counted on its own goroutine (a first count of a big
	// log parses every file; a hub's index build may be taking cores).
	type result struct {
		fc   *fileCount
		last *Entry // counted in the answer, not in fc
		err  error
	}
	res := make([]result, len(srcs))
	var wg sync.WaitGroup
	for i, s := range srcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i].fc, res[i].last, res[i].err = l.countFile(s, writer, cache)
		}()
	}
	wg.Wait()
	for i, s := range srcs {
		r := res[i]
		if r.err != nil {
			return 0, nil, r.err
		}
		total += r.fc.total
		for a, k := range r.fc.byAgent {
			byAgent[a] += k
		}
		if r.last != nil && !own(r.last, writer) {
			total++
			byAgent[r.last.Agent]++
		}
		l.countMu.Lock()
		cache[s.lf.rel] = r.fc
		l.countMu.Unlock()
	}
	return total, byAgent, nil
}

// countFile counts s's unread blocks not agent's own (as writer), from
// where cache's count for its file stopped when that still holds: the
// running count, and the last block (counted in the answer, not in the
// running count: a person may still be typing into it).
func (l *Log) countFile(s *source, writer string, cache map[string]*fileCount) (*fileCount, *Entry, error) {
	start := s.end
	// The cache map is shared by concurrent counts for this agent; a
	// fileCount is never changed once stored, so only the map needs
	// the lock.
	l.countMu.Lock()
	fc := cache[s.lf.rel]
	l.countMu.Unlock()
	if fc != nil && fc.from == start && fc.resume.Offset >= start && l.valid(fc.resume) {
		s.it.off = fc.resume.Offset
		if s.it.off > 0 {
			s.it.line = 0
		}
	} else {
		fc = &fileCount{from: start, byAgent: map[string]int{}}
	}
	next := &fileCount{from: start, total: fc.total, byAgent: cloneCounts(fc.byAgent), resume: fc.resume}
	if next.resume.Segment == "" {
		next.resume = pos{Segment: s.lf.rel, Offset: start, Anchor: anchorOfFile(l.abs(s.lf.rel), start)}
	}
	// The last block is counted in the answer but not in the running
	// count, and counting resumes at its start next time: a person
	// may still be typing into it.
	var last *Entry
	for {
		if err := s.advance(); err != nil {
			return nil, nil, err
		}
		if s.head == nil {
			break
		}
		if last != nil && !own(last, writer) {
			next.total++
			next.byAgent[last.Agent]++
		}
		last = s.head // blocks stay put: no copy needed
		next.resume = pos{Segment: s.lf.rel, Offset: last.Offset}
	}
	next.resume.Anchor = anchorOfFile(l.abs(s.lf.rel), next.resume.Offset)
	return next, last, nil
}

// LiveBytes returns the size in bytes of the live log's files: an upper
// bound of what a count or a read with no cursor parses.
func (l *Log) LiveBytes() (int64, error) {
	files, err := l.liveFiles()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, lf := range files {
		if st, err := os.Stat(l.abs(lf.rel)); err == nil {
			n += st.Size()
		}
	}
	return n, nil
}

// fileCount is a running count of one file's unread entries for an agent.
type fileCount struct {
	from    int64 // the cursor position the count starts at
	resume  pos   // counted up to here
	total   int
	byAgent map[string]int
}

func cloneCounts(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Ack moves agent's cursor past through, an entry returned by
// [Log.Unread], and past every entry before it in the log's order. The
// cursor never moves back: acknowledging an entry already read is a no-op.
func (l *Log) Ack(agent string, through Entry) error {
	if err := identity.ValidName(agent); err != nil {
		return err
	}
	if !isLogFile(through.Segment) || through.End <= 0 {
		return fmt.Errorf("ack: entry has no position in the log: %w", vault.ErrInvalid)
	}
	unlock, err := l.v.Lock(cursorLock(agent))
	if err != nil {
		return err
	}
	defer unlock()
	c, err := l.loadCursor(agent)
	if err != nil {
		return err
	}
	files, err := l.liveFiles()
	if err != nil {
		return err
	}
	// A file that cannot be read is left out: the entries shown came
	// from the others, and its position stays where it was.
	srcs, err := l.unreadSources(c, files, func(string, error) {})
	if err != nil {
		return err
	}
	defer closeSources(srcs)
	errFound := errors.New("found")
	err = merge(context.Background(), srcs, func(e *Entry, s *source) error {
		if e.Segment == through.Segment && e.Offset == through.Offset {
			return errFound
		}
		return nil
	})
	if !errors.Is(err, errFound) {
		return err // not among the unread: already acknowledged
	}
	return l.saveCursorLocked(agent, positions(c, srcs))
}

// saveCursorLocked writes agent's cursor. The caller holds the agent's
// cursor lock. Positions only move forward (a file that shrank is placed
// again on the next read).
func (l *Log) saveCursorLocked(agent string, c Cursor) error {
	c.Version = 2
	c.Segment, c.Offset, c.Head, c.Anchor, c.Time = "", 0, "", "", time.Time{}
	for rel, fp := range c.Files {
		fp.Anchor = anchorOfFile(l.abs(rel), fp.Offset)
		c.Files[rel] = fp
	}
	if err := vault.MkdirAll(l.abs(cursorsDir), 0o755); err != nil {
		return fmt.Errorf("ack: %w", err)
	}
	data, err := jsonIndent(c)
	if err != nil {
		return err
	}
	return vault.WriteFile(l.abs(cursorPath(agent)), data, 0o644)
}

// Follow calls fn with each entry appended after the call, in order, until
// ctx is done (then it returns nil) or fn returns an error. It polls every
// Options.PollInterval and runs in the caller's goroutine.
func (l *Log) Follow(ctx context.Context, fn func(Entry) error) error {
	at := map[string]int64{}
	files, err := l.liveFiles()
	if err != nil {
		return err
	}
	for _, lf := range files {
		if st, err := vault.Stat(l.abs(lf.rel)); err == nil {
			at[lf.rel] = st.Size()
		}
	}
	tick := time.NewTicker(l.opts.PollInterval)
	defer tick.Stop()
	for {
		files, err := l.liveFiles()
		if err != nil {
			return err
		}
		var srcs []*source
		for _, lf := range files {
			off := at[lf.rel]
			st, err := vault.Stat(l.abs(lf.rel))
			if err != nil || st.Size() == off {
				continue
			}
			if st.Size() < off {
				at[lf.rel] = st.Size() // a person cut it: follow from its end
				continue
			}
			it, err := l.openIter(lf.rel, streamLive, off, true)
			if err != nil {
				continue
			}
			srcs = append(srcs, &source{lf: lf, writer: lf.writer, it: it, end: off})
		}
		cl := l.cleared()
		saw := sawSet{}
		err = merge(ctx, srcs, func(e *Entry, s *source) error {
			if e.Torn {
				return nil
			}
			saw.see(e)
			cl.apply(e)
			return fn(*e)
		})
		l.advance(files, saw)
		for _, s := range srcs {
			if s.passed {
				at[s.lf.rel] = s.end
			}
		}
		closeSources(srcs)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
