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
	var t ownTail
	var h feedHint
	hintOK := false
	// The target is opened once, for checking the hint and reading its end.
	f, err := openFile(l.abs(target), os.O_RDONLY, 0)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return t, fmt.Errorf("open %s: %w", target, err)
	}
	if f != nil {
		defer f.Close()
	}
	if err := readHint(l.abs(hintPath(stream, writer)), &h); err == nil && isLogFile(h.File) {
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
		if ok {
			hintOK = true
			t.seq, t.hash = h.Seq, h.Hash
		}
	}
	t.hint = h
	if !hintOK {
		t.hint = feedHint{Cited: nil}
		// Scan every file of the feed for its highest entry.
		for _, rel := range l.ownFiles(stream, writer, files) {
			data, err := os.ReadFile(l.abs(rel))
			if err != nil {
				return t, fmt.Errorf("read %s: %w", rel, err)
			}
			p := newParser(data, 0, 0, stream, rel)
			for {
				e, ok := p.next()
				if !ok {
					break
				}
				if e.Signed && e.feed && !e.Torn && e.Writer == writer && e.Seq > t.seq {
					t.seq, t.hash = e.Seq, e.Hash
				}
			}
		}
	}
	// The end of the target file: parse what lies after the hint (all of
	// it if the hint is for another file).
	if f == nil {
		t.endsNL = 2
		return t, nil
	}
	st, err := f.Stat()
	if err != nil {
		return t, err
	}
	t.size = st.Size()
	from := int64(0)
	if hintOK && h.File == target {
		from = h.Offset
	}
	if from == t.size {
		t.endsNL = 2
		if t.size == 0 {
			t.endsNL = 2
		}
		return t, nil
	}
	data := make([]byte, t.size-from)
	if _, err := f.ReadAt(data, from); err != nil && !errors.Is(err, io.EOF) {
		return t, fmt.Errorf("read %s: %w", target, err)
	}
	for j := len(data) - 1; j >= 0 && data[j] == '\n' && t.endsNL < 2; j-- {
		t.endsNL++
	}
	p := newParser(data, from, 0, stream, target)
	for {
		e, ok := p.next()
		if !ok {
			break
		}
		if e.Signed && e.feed && !e.Torn && e.Writer == writer && e.Seq > t.seq {
			t.seq, t.hash = e.Seq, e.Hash
		}
		t.torn = e.Torn
	}
	return t, nil
}

// findKey looks for an entry of writer carrying key digest k in the files
// given (the writer's newest files), newest first.
func (l *Log) findKey(stream, writer, k string, rels []string) (*Entry, error) {
	needle := []byte(" k=" + k + " ")
	for i := len(rels) - 1; i >= 0; i-- {
		data, err := os.ReadFile(l.abs(rels[i]))
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
// clock under the lock.
func (l *Log) appendFeed(stream, agent, writer string, es []*Entry, decorate func(e *Entry, seq int64) error) (appended, error) {
	var res appended
	s, err := l.signer(agent, writer)
	if err != nil {
		return res, err
	}
	// Before taking the feed's lock: list the files and read what is new
	// in the other writers' feeds (checking their heads' signatures), to
	// cite them and record them in the witness. None of it depends on this
	// feed, so the lock is held only for what does.
	files, err := l.streamFiles(stream)
	if err != nil {
		return res, err
	}
	scan, err := l.scanFeeds(stream, files, writer)
	if err != nil {
		return res, err
	}
	heads := scan.heads

	unlock, err := l.v.Lock(feedLock(stream, writer))
	if err != nil {
		return res, err
	}
	locked := true
	defer func() {
		if locked {
			unlock()
		}
	}()
	now := l.opts.Now().UTC().Truncate(time.Second)
	// A feed file is chosen by the time of the entry: a clock that ran
	// ahead once does not pull later entries into a later month.
	target := DecisionFeedPath(writer)
	if stream == streamLive {
		target = FeedPath(writer, now)
	}
	t, err := l.findOwnTail(stream, writer, target, files)
	if err != nil {
		return res, err
	}
	// Idempotency: the same key in the writer's feed means done already.
	if len(es) == 1 && es[0].Key != "" {
		own := l.ownFiles(stream, writer, files)
		if len(own) > 2 {
			own = own[len(own)-2:] // this month and the one before
		}
		prev, err := l.findKey(stream, writer, es[0].Key, own)
		if err != nil {
			return res, err
		}
		if prev != nil {
			*es[0] = *prev
			res.duplicate = true
			return res, nil
		}
	}
	// The highest entry of this feed this machine saw: its witness, or
	// the last append here (the hint, read under the lock: every append
	// of this writer on this machine records it before letting go).
	wit := scan.w.get(stream, writer)
	if t.last.Seq > wit.Seq {
		wit = t.last
	}
	seq, prev := t.seq, t.hash
	if wit.Seq > seq {
		// The feed lost entries this machine saw it write: say so, and
		// never reuse their numbers.
		res.gap = strconv.FormatInt(seq+1, 10)
		if wit.Seq > seq+1 {
			res.gap += "-" + strconv.FormatInt(wit.Seq, 10)
		}
		seq, prev = wit.Seq, wit.Hash
		l.opts.Logger.Warn("live log: own feed lost entries", "writer", writer, "missing", res.gap)
	}
	prevHash, ok := parseHash(prev)
	if !ok {
		prevHash = genesis
	}
	// Cite the heads of other feeds that moved since this writer last
	// cited them.
	cited := map[string]int64{}
	for k, v := range t.hint.Cited {
		cited[k] = v
	}
	var cites []Cite
	for w, h := range heads {
		if w == writer || h.Seq == 0 || h.Seq <= cited[w] {
			continue
		}
		cites = append(cites, Cite{Writer: w, Seq: h.Seq, Hash: h.Hash[:citeHashLen]})
		cited[w] = h.Seq
	}
	sort.Slice(cites, func(i, j int) bool { return cites[i].Writer < cites[j].Writer })

	var buf []byte
	if t.size > 0 {
		switch {
		case t.torn:
			buf = append(buf, "\n"+tornMarker+"\n\n"...)
			res.torn = true
			l.opts.Logger.Warn("live log: torn tail stepped over", "file", target)
		case t.endsNL == 0:
			buf = append(buf, "\n\n"...)
		case t.endsNL == 1:
			buf = append(buf, '\n')
		}
	}
	for i, e := range es {
		seq++
		e.Writer, e.Seq, e.feed, e.stream = writer, seq, true, stream
		e.Time, e.timeText = now, now.Format(timeLayout)
		if i == 0 {
			e.Cites, e.Gap = cites, res.gap
		}
		if decorate != nil {
			if err := decorate(e, seq); err != nil {
				return res, err
			}
		}
		e.sign(s, prevHash)
		prevHash, _ = parseHash(e.Hash)
		e.Offset = t.size + int64(len(buf))
		buf = append(buf, e.record()...)
		e.End = t.size + int64(len(buf))
		e.Segment = target
		if i+1 < len(es) {
			now = l.opts.Now().UTC().Truncate(time.Second)
		}
	}
	path := l.abs(target)
	f, err := openFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	created := false
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			f, err = openFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		return res, fmt.Errorf("open %s: %w", target, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return res, fmt.Errorf("stat %s: %w", target, err)
	}
	created = st.Size() == 0
	if st.Size() != t.size {
		// A person typed into the file between our read and now (feeds
		// have one writer, but people may type anywhere): place the
		// records after what they wrote, on a clean line.
		delta := st.Size() - t.size
		for _, e := range es {
			e.Offset += delta + 2
			e.End += delta + 2
		}
		buf = append([]byte("\n\n"), buf...)
		t.size = st.Size()
	}
	// One write: O_APPEND puts the records at the end as a whole. A short
	// write (a full disk) is cut back, so no partial record is left.
	if n, err := f.Write(buf); err != nil || n != len(buf) {
		if n > 0 {
			if terr := f.Truncate(t.size); terr != nil {
				l.opts.Logger.Error("live log: could not cut back a short write", "file", target, "err", terr)
			}
		}
		if err == nil {
			err = io.ErrShortWrite
		}
		return res, fmt.Errorf("append to %s: %w", target, err)
	}
	last := es[len(es)-1]
	end := t.size + int64(len(buf))
	nh := feedHint{File: target, Offset: end, Anchor: anchorOf(buf[max(0, len(buf)-anchorLen):]), Seq: last.Seq, Hash: last.Hash, Cited: cited}
	if len(buf) < anchorLen && end > int64(len(buf)) {
		nh.Anchor = anchorOfFile(path, end)
	}
	doc, err := encodeHint(nh)
	if err == nil {
		err = l.writeStateDoc(hintPath(stream, writer), doc)
	}
	if err != nil {
		l.opts.Logger.Warn("live log: feed hint not written", "err", err)
	}
	// The feed's lock is let go before the witness update: the next
	// append of this writer numbers after the hint, written above, and
	// its own witness update raises the witness only higher.
	unlock()
	locked = false
	// The witness learns what the scan found and this append's own
	// entries; the target file counts as scanned to its new end when the
	// scan had reached the point where the records went (not when another
	// append of this writer has moved it on since). A process killed
	// before this leaves the witness behind, not wrong: the next scan of
	// the file finds the records.
	start := end - int64(len(buf))
	own := scanned{Offset: end, Anchor: nh.Anchor, Writer: writer, Seq: last.Seq, Hash: last.Hash}
	var aerr error
	if err := l.updateWitness(func(w *witness) bool {
		aerr = l.applyScan(&scan, w, stream)
		if cur := w.Files[target]; cur.Offset == start && (start == 0 || cur.Anchor != "") {
			w.Files[target] = own
		}
		w.raise(stream, writer, seen{Seq: last.Seq, Hash: last.Hash, Time: last.Time})
		return true
	}); err != nil || aerr != nil {
		l.opts.Logger.Warn("live log: witness not updated", "err", errors.Join(err, aerr))
	}
	// fsync outside the lock: it flushes every record written so far, so
	// concurrent appenders share the cost; each still returns only once
	// its own records are durable.
	if err := f.Sync(); err != nil {
		return res, fmt.Errorf("sync %s: %w", target, err)
	}
	if created {
		if err := vault.SyncDir(filepath.Dir(path)); err != nil {
			return res, err
		}
		if err := vault.SyncDir(filepath.Dir(filepath.Dir(path))); err != nil {
			return res, err
		}
	}
	return res, nil
}
