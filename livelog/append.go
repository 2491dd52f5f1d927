package livelog

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/vault"
)

// MaxKeyLen bounds an idempotency key.
const MaxKeyLen = 128

// keyDigest is what a feed stores of an idempotency key: 22 characters of
// its SHA-256, so that any text can be a key and none leaks into the log.
func keyDigest(key string) string {
	sum := sha256.Sum256([]byte(key))
	return b64.EncodeToString(sum[:16])
}

// feedHint remembers where a writer's feed ends, so an append need not
// scan its files: checked against the file before use (see [pos]).
type feedHint struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	Anchor string `json:"anchor"`
	Seq    int64  `json:"seq"`
	Hash   string `json:"hash"`
	// Cited is what the writer's entries cited so far: the next append
	// cites only heads that moved since.
	Cited map[string]int64 `json:"cited,omitempty"`
}

// readHint reads the feed hint at path into h.
func readHint(path string, h *feedHint) error {
	doc, err := readStateDoc(path)
	if err == nil {
		*h, err = decodeHint(doc)
	}
	return err
}

func hintPath(stream, writer string) string {
	return StateDir + "/feeds/" + stream + "/" + writer + ".json"
}

func feedLock(stream, writer string) string { return "livelog-" + stream + "-" + writer }

// ownTail is what an appender knows about the end of its own feed.
type ownTail struct {
	seq    int64
	hash   string
	torn   bool // the target file ends in a torn record
	endsNL int  // newlines ending the target file (0, 1, 2+)
	size   int64
	// nulPad is how many NUL bytes pad the target file's end past size:
	// a crash's torn tail on file systems that set the size before the
	// data. The append cuts them (they never are content), so the file
	// stays text that search reads.
	nulPad int64
	hint   feedHint
	// last is the last append of this writer on this machine, as its hint
	// records it (whether or not the hint still matches the file).
	last seen
}

// ownFiles lists the files of writer's feed in stream: the canonical
// files (WRITER.md in each month, or the decision feed).
func (l *Log) ownFiles(stream, writer string, files []logFile) []string {
	var out []string
	for _, f := range files {
		if !f.legacy && f.writer == writer {
			out = append(out, f.rel)
		}
	}
	return out
}

// findOwnTail finds the newest entry of writer's feed and the shape of
// the end of target, trusting the hint when it checks out. Called with
// the feed's lock held.
func (l *Log) findOwnTail(stream, writer, target string, files []logFile) (ownTail, error) {
	// The target is opened once, for checking the hint and reading its end.
	f, err := vault.OpenFile(l.abs(target), os.O_RDONLY, 0)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ownTail{}, fmt.Errorf("open %s: %w", target, err)
	}
	if f != nil {
		defer f.Close()
	}
	t, hintOK := l.checkHint(stream, writer, target, f)
	if !hintOK {
		// Scan every file of the feed for its highest entry.
		for _, rel := range l.ownFiles(stream, writer, files) {
			data, err := vault.ReadFile(l.abs(rel))
			if err != nil {
				return t, fmt.Errorf("read %s: %w", rel, err)
			}
			t.highest(newParser(data, 0, 0, stream, rel), writer)
		}
	}
	if f == nil {
		t.endsNL = 2
		return t, nil
	}
	// The end of the target file: parse what lies after the hint (all of
	// it if the hint is for another file).
	from := int64(0)
	if hintOK && t.hint.File == target {
		from = t.hint.Offset
	}
	return t, t.readEnd(f, from, stream, writer, target)
}

// checkHint reads the writer's feed hint and reports whether it still
// matches the files: then the tail is the hint's. t.last is the hint's
// last append either way.
func (l *Log) checkHint(stream, writer, target string, f *os.File) (ownTail, bool) {
	var t ownTail
	var h feedHint
	if err := readHint(l.abs(hintPath(stream, writer)), &h); err != nil || !isLogFile(h.File) {
		return t, false
	}
	if _, ok := parseHash(h.Hash); ok && h.Seq > 0 {
		t.last = seen{Seq: h.Seq, Hash: h.Hash}
	}
	ok := false
	if h.File == target && f != nil {
		if st, err := f.Stat(); err == nil && st.Size() >= h.Offset && h.Offset >= 0 {
			a, err := anchorAt(f, h.Offset)
			ok = err == nil && a == h.Anchor
		}
	} else if h.File != target {
		_, ok = l.validSize(pos{Segment: h.File, Offset: h.Offset, Anchor: h.Anchor})
	}
	if !ok {
		return t, false
	}
	t.seq, t.hash, t.hint = h.Seq, h.Hash, h
	return t, true
}

// highest raises t to the highest whole signed entry of writer that p
// parses, and reports whether the last block is torn.
func (t *ownTail) highest(p *parser, writer string) (lastTorn bool) {
	for {
		e, ok := p.next()
		if !ok {
			return lastTorn
		}
		if e.Signed && e.feed && !e.Torn && e.Writer == writer && e.Seq > t.seq {
			t.seq, t.hash = e.Seq, e.Hash
		}
		lastTorn = e.Torn
	}
}

// readEnd reads the end of the target file f from offset from: its size,
// the newlines that end it, whether it ends in a torn record, and any
// entry of writer there above t.
func (t *ownTail) readEnd(f *os.File, from int64, stream, writer, target string) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	t.size = st.Size()
	if from == t.size {
		t.endsNL = 2
		return nil
	}
	data := make([]byte, t.size-from)
	if _, err := f.ReadAt(data, from); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read %s: %w", target, err)
	}
	if kept := bytes.TrimRight(data, "\x00"); len(kept) < len(data) {
		t.nulPad = int64(len(data) - len(kept))
		t.size -= t.nulPad
		data = kept
		if from == t.size {
			t.endsNL = 2
			return nil
		}
	}
	for j := len(data) - 1; j >= 0 && data[j] == '\n' && t.endsNL < 2; j-- {
		t.endsNL++
	}
	t.torn = t.highest(newParser(data, from, 0, stream, target), writer)
	return nil
}

// findKey looks for an entry of writer carrying key digest k in the files
// given (the writer's newest files), newest first.
func (l *Log) findKey(stream, writer, k string, rels []string) (*Entry, error) {
	needle := []byte(" k=" + k + " ")
	for i := len(rels) - 1; i >= 0; i-- {
		data, err := vault.ReadFile(l.abs(rels[i]))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		if !bytes.Contains(data, needle) {
			continue
		}
		p := newParser(data, 0, 1, stream, rels[i])
		for {
			e, ok := p.next()
			if !ok {
				break
			}
			if e.Signed && e.feed && e.Writer == writer && e.Key == k {
				return &e, nil
			}
		}
	}
	return nil, nil
}

// AppendResult is what [Log.Append] did besides appending.
type AppendResult struct {
	Entry Entry `json:"entry"`
	// Notes say what was normalised: "summary folded to one line",
	// "unclosed code fence in body closed".
	Notes []string `json:"notes,omitempty"`
	// SteppedOverTornTail is true when the feed file ended in a record cut
	// short by a crash; a marker line was written after it and the new
	// entry starts on a clean line.
	SteppedOverTornTail bool `json:"stepped_over_torn_tail,omitempty"`
	// Duplicate is true when an entry with the same idempotency key was
	// already in the writer's feed: nothing was written and Entry is that
	// earlier entry.
	Duplicate bool `json:"duplicate,omitempty"`
	// Gap names entries of the writer's own feed that this machine had
	// seen but that are gone ("16-20"); the new entry records it.
	Gap string `json:"gap,omitempty"`
}

// Append signs e as agent and appends it to agent's feed on this machine,
// log/live/YYYY-MM/AGENT@DEVICE.md. The time is taken from the clock once
// the feed's lock is held (e.Time is ignored). Channel and kind default to
// "general" and "note"; the summary is folded to one line; the body is
// markdown of at most [MaxBodyBytes], with CRLF turned into LF. e.Key, if
// set, is an idempotency key (at most [MaxKeyLen] bytes): if the feed
// already holds an entry with that key, nothing is written and that entry
// is returned (see [AppendResult.Duplicate]). The entry is on disk
// (fsynced) when Append returns.
func (l *Log) Append(agent string, e Entry) (Entry, error) {
	r, err := l.AppendDetailed(agent, e)
	return r.Entry, err
}

// AppendDetailed is [Log.Append] that also reports normalisation, torn
// tail recovery, duplicates and gaps.
func (l *Log) AppendDetailed(agent string, e Entry) (AppendResult, error) {
	rs, err := l.appendAll(agent, []Entry{e})
	if err != nil {
		return AppendResult{}, err
	}
	return rs[0], nil
}

// AppendBatch appends many entries by one agent under one lock, with one
// write per file and one fsync: for importing and generating logs. Each
// entry is validated like [Log.Append] (nothing is written if one fails)
// and stamped by the clock in turn. Keys are not looked up.
func (l *Log) AppendBatch(agent string, es []Entry) ([]Entry, error) {
	for i := range es {
		es[i].Key = ""
	}
	rs, err := l.appendAll(agent, es)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(rs))
	for i, r := range rs {
		out[i] = r.Entry
	}
	return out, nil
}

func (l *Log) appendAll(agent string, es []Entry) ([]AppendResult, error) {
	if err := identity.ValidName(agent); err != nil {
		return nil, err
	}
	rs := make([]AppendResult, len(es))
	for i := range es {
		key := es[i].Key
		notes, err := prepare(&es[i])
		if err == nil {
			err = quarantineCheck(&es[i], scan.PlaceLog, "summary", es[i].Summary, "body", es[i].Body)
		}
		if err == nil && len(key) > MaxKeyLen {
			err = fmt.Errorf("key is %d bytes, more than the %d allowed: %w", len(key), MaxKeyLen, ErrTooLarge)
		}
		if err != nil {
			if len(es) > 1 {
				err = fmt.Errorf("entry %d: %w", i+1, err)
			}
			return nil, err
		}
		if key != "" {
			es[i].Key = keyDigest(key)
		}
		rs[i].Notes = notes
		es[i].Agent, es[i].stream, es[i].Hand, es[i].Torn, es[i].feed = agent, streamLive, false, false, true
	}
	writer, err := l.Writer(agent)
	if err != nil {
		return nil, err
	}
	ptrs := make([]*Entry, len(es))
	for i := range es {
		ptrs[i] = &es[i]
	}
	w, err := l.appendFeed(streamLive, agent, writer, ptrs, nil)
	if err != nil {
		return nil, err
	}
	for i := range es {
		rs[i].Entry = es[i]
		rs[i].SteppedOverTornTail = w.torn && i == 0
		rs[i].Duplicate = w.duplicate
		if i == 0 {
			rs[i].Gap = w.gap
		}
		if w.gap != "" && i == 0 {
			rs[i].Notes = append(rs[i].Notes, "entries "+w.gap+" of "+writer+" are missing from its feed (deleted or cut on this machine or by a sync tool); the new entry records the gap")
		}
	}
	return rs, nil
}

// appended is what appendFeed did.
type appended struct {
	torn, duplicate bool
	gap             string
}

// appendFeed signs and appends es as writer to its feed in stream.
// decorate, if set, is called for each entry with its seq before it is
// signed (decisions take their id from it). Entries are stamped by the
// clock under the lock. It goes in four steps:
//
//   - scan, before the feed's lock: what is new in the other writers'
//     feeds, to cite them and record them in the witness (none of it
//     depends on this feed, so the lock is held only for what does);
//   - plan, under the lock: the end of the writer's own feed, a duplicate
//     idempotency key, the numbers the entries take (and any gap), the
//     heads to cite;
//   - write, under the lock: sign the records and append them in one
//     write, then the feed's hint;
//   - publish, after the lock: the witness learns the scan and the
//     records, and the records are fsynced before the append returns.
func (l *Log) appendFeed(stream, agent, writer string, es []*Entry, decorate func(e *Entry, seq int64) error) (appended, error) {
	// Before anything is written: this folder must be the machine that
	// owns the device name (not a copy of another machine's vault).
	if _, err := l.v.CheckMachine(); err != nil {
		return appended{}, err
	}
	s, err := l.signer(agent, writer)
	if err != nil {
		return appended{}, err
	}
	files, err := l.streamFiles(stream)
	if err != nil {
		return appended{}, err
	}
	scan, err := l.scanFeeds(stream, files, writer)
	if err != nil {
		return appended{}, err
	}

	unlock, err := l.v.Lock(feedLock(stream, writer))
	if err != nil {
		return appended{}, err
	}
	locked := true
	defer func() {
		if locked {
			unlock()
		}
	}()
	p, err := l.planAppend(stream, writer, files, &scan, es)
	if err != nil || p.res.duplicate {
		return p.res, err
	}

	buf, err := l.encodeRecords(&p, stream, writer, s, es, decorate)
	if err != nil {
		return p.res, err
	}
	f, err := l.openFeed(p.target)
	if err != nil {
		return p.res, err
	}
	defer f.Close()
	buf, created, err := l.writeRecords(f, &p, es, buf)
	if err != nil {
		return p.res, err
	}
	last := es[len(es)-1]
	end := p.tail.size + int64(len(buf))
	anchor := l.saveHint(stream, writer, &p, last, buf, end)
	// The feed's lock is let go before the witness update: the next
	// append of this writer numbers after the hint, written above, and
	// its own witness update raises the witness only higher.
	unlock()
	locked = false

	l.recordAppend(&scan, stream, writer, p.target, end-int64(len(buf)), end, anchor, last)
	// fsync outside the lock: it flushes every record written so far, so
	// concurrent appenders share the cost; each still returns only once
	// its own records are durable.
	return p.res, l.syncFeed(f, p.target, created)
}

// appendPlan is what an append decided under its feed's lock, before
// writing.
type appendPlan struct {
	target string    // the feed file the records go to
	now    time.Time // the first entry's time
	tail   ownTail
	seq    int64 // the number the first entry follows
	prev   Hash  // and that entry's chain hash
	cites  []Cite
	cited  map[string]int64 // what the writer has cited, these included
	res    appended
}

// planAppend is the plan step of [Log.appendFeed]; with the feed's lock
// held. An idempotency key already in the feed sets res.duplicate and
// puts that entry in *es[0]: nothing is to be written.
func (l *Log) planAppend(stream, writer string, files []logFile, scan *feedScan, es []*Entry) (appendPlan, error) {
	p := appendPlan{now: l.opts.Now().UTC().Truncate(time.Second)}
	// A feed file is chosen by the time of the entry: a clock that ran
	// ahead once does not pull later entries into a later month.
	p.target = DecisionFeedPath(writer)
	if stream == streamLive {
		p.target = FeedPath(writer, p.now)
	}
	var err error
	if p.tail, err = l.findOwnTail(stream, writer, p.target, files); err != nil {
		return p, err
	}
	if p.res.duplicate, err = l.findDuplicate(stream, writer, files, es); err != nil || p.res.duplicate {
		return p, err
	}
	// The highest entry of this feed this machine saw: its witness, or
	// the last append here (the hint, read under the lock: every append
	// of this writer on this machine records it before letting go).
	wit := scan.w.get(stream, writer)
	if p.tail.last.Seq > wit.Seq {
		wit = p.tail.last
	}
	seq, prev := p.tail.seq, p.tail.hash
	if wit.Seq > seq {
		// The feed lost entries this machine saw it write: say so, and
		// never reuse their numbers.
		p.res.gap = strconv.FormatInt(seq+1, 10)
		if wit.Seq > seq+1 {
			p.res.gap += "-" + strconv.FormatInt(wit.Seq, 10)
		}
		seq, prev = wit.Seq, wit.Hash
		l.opts.Logger.Warn("live log: own feed lost entries", "writer", writer, "missing", p.res.gap)
	}
	p.seq = seq
	var ok bool
	if p.prev, ok = parseHash(prev); !ok {
		p.prev = genesis
	}
	p.cites, p.cited = citesFor(writer, p.tail.hint.Cited, scan.heads)
	return p, nil
}

// findDuplicate reports whether the single entry of es carries an
// idempotency key that the writer's feed already holds (this month or the
// one before); if so, *es[0] becomes that entry.
func (l *Log) findDuplicate(stream, writer string, files []logFile, es []*Entry) (bool, error) {
	if len(es) != 1 || es[0].Key == "" {
		return false, nil
	}
	own := l.ownFiles(stream, writer, files)
	if len(own) > 2 {
		own = own[len(own)-2:] // this month and the one before
	}
	prev, err := l.findKey(stream, writer, es[0].Key, own)
	if err != nil || prev == nil {
		return false, err
	}
	*es[0] = *prev
	return true, nil
}

// citesFor returns the heads of other feeds that moved since writer last
// cited them (cited), sorted by writer, and what it has cited with them.
func citesFor(writer string, cited map[string]int64, heads map[string]head) ([]Cite, map[string]int64) {
	now := make(map[string]int64, len(cited))
	for k, v := range cited {
		now[k] = v
	}
	var cites []Cite
	for w, h := range heads {
		if w == writer || h.Seq == 0 || h.Seq <= now[w] {
			continue
		}
		cites = append(cites, Cite{Writer: w, Seq: h.Seq, Hash: h.Hash[:citeHashLen]})
		now[w] = h.Seq
	}
	sort.Slice(cites, func(i, j int) bool { return cites[i].Writer < cites[j].Writer })
	return cites, now
}

// encodeRecords numbers, stamps, signs and encodes es as the plan says,
// after what the feed file's end needs (a marker after a torn record, the
// newlines for a clean line), setting each entry's place in the file.
func (l *Log) encodeRecords(p *appendPlan, stream, writer string, s *identity.Signer, es []*Entry, decorate func(e *Entry, seq int64) error) ([]byte, error) {
	var buf []byte
	if p.tail.size > 0 {
		switch {
		case p.tail.torn:
			buf = append(buf, "\n"+tornMarker+"\n\n"...)
			p.res.torn = true
			l.opts.Logger.Warn("live log: torn tail stepped over", "file", p.target)
		case p.tail.endsNL == 0:
			buf = append(buf, "\n\n"...)
		case p.tail.endsNL == 1:
			buf = append(buf, '\n')
		}
	}
	now, seq, prevHash := p.now, p.seq, p.prev
	for i, e := range es {
		seq++
		e.Writer, e.Seq, e.feed, e.stream = writer, seq, true, stream
		e.Time, e.timeText = now, now.Format(timeLayout)
		if i == 0 {
			e.Cites, e.Gap = p.cites, p.res.gap
		}
		if decorate != nil {
			if err := decorate(e, seq); err != nil {
				return nil, err
			}
		}
		e.sign(s, prevHash)
		prevHash, _ = parseHash(e.Hash)
		e.Offset = p.tail.size + int64(len(buf))
		buf = append(buf, e.record()...)
		e.End = p.tail.size + int64(len(buf))
		e.Segment = p.target
		if i+1 < len(es) {
			now = l.opts.Now().UTC().Truncate(time.Second)
		}
	}
	return buf, nil
}

// openFeed opens the feed file target for appending, creating it (and its
// month's folder) if need be.
func (l *Log) openFeed(target string) (*os.File, error) {
	path := l.abs(target)
	f, err := vault.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if err = vault.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			f, err = vault.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", target, err)
	}
	return f, nil
}

// writeRecords appends buf to the feed file f in one write and returns
// what it wrote, and whether the file was empty (new). If a person typed
// into the file since the plan read its end, the records go after what
// they typed, on a clean line (the entries' places and p.tail.size
// follow).
func (l *Log) writeRecords(f *os.File, p *appendPlan, es []*Entry, buf []byte) ([]byte, bool, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("stat %s: %w", p.target, err)
	}
	if p.tail.nulPad > 0 && st.Size() == p.tail.size+p.tail.nulPad {
		// Cut the NUL padding of a torn tail before the records go on.
		if err := f.Truncate(p.tail.size); err != nil {
			return nil, false, fmt.Errorf("cut the NUL padding of %s: %w", p.target, err)
		}
		l.opts.Logger.Warn("live log: NUL padding of a torn tail cut", "file", p.target, "bytes", p.tail.nulPad)
		if st, err = f.Stat(); err != nil {
			return nil, false, fmt.Errorf("stat %s: %w", p.target, err)
		}
	}
	created := st.Size() == 0
	if st.Size() != p.tail.size {
		// Feeds have one writer, but people may type anywhere.
		delta := st.Size() - p.tail.size
		for _, e := range es {
			e.Offset += delta + 2
			e.End += delta + 2
		}
		buf = append([]byte("\n\n"), buf...)
		p.tail.size = st.Size()
	}
	// One write: O_APPEND puts the records at the end as a whole. A short
	// write (a full disk) is cut back, so no partial record is left.
	if n, err := f.Write(buf); err != nil || n != len(buf) {
		if n > 0 {
			if terr := f.Truncate(p.tail.size); terr != nil {
				l.opts.Logger.Error("live log: could not cut back a short write", "file", p.target, "err", terr)
			}
		}
		if err == nil {
			err = io.ErrShortWrite
		}
		return nil, false, fmt.Errorf("append to %s: %w", p.target, err)
	}
	return buf, created, nil
}

// saveHint records where the writer's feed now ends (end, after the last
// entry last) and what it has cited, so that its next append need not
// scan; it returns the anchor of that end. A hint not saved costs the
// next append a scan, so it is only logged.
func (l *Log) saveHint(stream, writer string, p *appendPlan, last *Entry, buf []byte, end int64) string {
	nh := feedHint{File: p.target, Offset: end, Anchor: anchorOf(buf[max(0, len(buf)-anchorLen):]), Seq: last.Seq, Hash: last.Hash, Cited: p.cited}
	if len(buf) < anchorLen && end > int64(len(buf)) {
		nh.Anchor = anchorOfFile(l.abs(p.target), end)
	}
	if err := l.writeStateDoc(hintPath(stream, writer), encodeHint(nh)); err != nil {
		l.opts.Logger.Warn("live log: feed hint not written", "err", err)
	}
	return nh.Anchor
}

// recordAppend teaches the witness what the scan found and the append's
// own entries (the last one, ending the file target at end with anchor);
// the target file counts as scanned to its new end when the scan had
// reached the point where the records went (start), not when another
// append of this writer has moved it on since. A process killed before
// this leaves the witness behind, not wrong: the next scan of the file
// finds the records. A witness not updated is only logged.
func (l *Log) recordAppend(scan *feedScan, stream, writer, target string, start, end int64, anchor string, last *Entry) {
	own := scanned{Offset: end, Anchor: anchor, Writer: writer, Seq: last.Seq, Hash: last.Hash}
	var aerr error
	if err := l.updateWitness(func(w *witness) bool {
		aerr = l.applyScan(scan, w, stream)
		if cur := w.Files[target]; cur.Offset == start && (start == 0 || cur.Anchor != "") {
			w.Files[target] = own
		}
		w.raise(stream, writer, seen{Seq: last.Seq, Hash: last.Hash, Time: last.Time})
		return true
	}); err != nil || aerr != nil {
		l.opts.Logger.Warn("live log: witness not updated", "err", errors.Join(err, aerr))
	}
}

// syncFeed makes the records written to f (the feed file target)
// durable, and, for a new file, its name in its folder and that folder's
// in its parent (a new month). Only a failed fsync of the records is an
// error: once they are on disk the append has happened.
func (l *Log) syncFeed(f *os.File, target string, created bool) error {
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", target, err)
	}
	path := l.abs(target)
	if !created {
		return nil
	}
	// The records are on disk now; only the new file's name may not be.
	// Reporting that as a failed append would invite a retry that appends
	// the entries twice, so it is a warning, as for every write whose
	// rename has landed (vault.Written).
	err := vault.SyncDir(filepath.Dir(path))
	if err == nil {
		err = vault.SyncDir(filepath.Dir(filepath.Dir(path)))
	}
	if err != nil {
		l.opts.Logger.Warn("live log: entries written; the new feed file's folder could not be synced", "file", target, "err", err)
	}
	return nil
}
