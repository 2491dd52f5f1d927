package livelog

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// witnessFile is this machine's witness: for every feed, the highest
// entry it has seen (with a valid signature), so that entries cut from a
// feed after this machine saw them stay reported, whatever is appended
// later. It also remembers how far each feed file has been scanned, so
// that keeping it current costs a stat per file and the parse of what is
// new. Machine-local (.nexus/state is never synced).
const (
	witnessFile = StateDir + "/witness.json"
	witnessLock = "livelog-witness"
)

// seen is the highest entry of one feed that this machine saw.
type seen struct {
	Seq  int64     `json:"seq"`
	Hash string    `json:"hash"`
	Time time.Time `json:"time,omitzero"`
}

// scanned is how far one feed file has been read for the witness.
type scanned struct {
	Offset int64  `json:"offset"`
	Anchor string `json:"anchor"`
	// The last signed entry of the file up to Offset.
	Writer string `json:"writer,omitempty"`
	Seq    int64  `json:"seq,omitempty"`
	Hash   string `json:"hash,omitempty"`
}

type witness struct {
	// Feeds: stream ("live", "decisions") -> writer -> highest seen.
	Feeds map[string]map[string]seen `json:"feeds"`
	Files map[string]scanned         `json:"files"`
}

func (w witness) get(stream, writer string) seen { return w.Feeds[stream][writer] }

// raise records s for writer unless the witness already saw more.
func (w *witness) raise(stream, writer string, s seen) bool {
	if w.Feeds == nil {
		w.Feeds = map[string]map[string]seen{}
	}
	m := w.Feeds[stream]
	if m == nil {
		m = map[string]seen{}
		w.Feeds[stream] = m
	}
	if old, ok := m[writer]; ok && old.Seq >= s.Seq {
		return false
	}
	m[writer] = s
	return true
}

func (l *Log) loadWitness() witness {
	var w witness
	doc, err := readStateDoc(l.abs(witnessFile))
	if err == nil {
		// The same text as last read or written by this process: its
		// decoded copy (decoding was a tenth of an append).
		l.witMu.Lock()
		if l.witDoc != nil && bytes.Equal(doc, l.witDoc) {
			w = l.wit.clone()
			l.witMu.Unlock()
			return w
		}
		l.witMu.Unlock()
		w, err = decodeWitness(doc)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.opts.Logger.Warn("live log: unreadable witness; starting a new one", "err", err)
		w = witness{}
	}
	if w.Feeds == nil {
		w.Feeds = map[string]map[string]seen{}
	}
	if w.Files == nil {
		w.Files = map[string]scanned{}
	}
	if err == nil {
		l.remember(doc, w)
	}
	return w
}

// remember keeps w, whose text is doc, as this process's decoded witness.
func (l *Log) remember(doc []byte, w witness) {
	c := w.clone()
	l.witMu.Lock()
	l.witDoc, l.wit = doc, c
	l.witMu.Unlock()
}

// clone copies w deeply: callers change the copy they get.
func (w witness) clone() witness {
	c := witness{Feeds: make(map[string]map[string]seen, len(w.Feeds)), Files: make(map[string]scanned, len(w.Files))}
	for s, m := range w.Feeds {
		cm := make(map[string]seen, len(m))
		for k, v := range m {
			cm[k] = v
		}
		c.Feeds[s] = cm
	}
	for k, v := range w.Files {
		c.Files[k] = v
	}
	return c
}

// errWitnessReadOnly marks a witness that could not be saved because this
// process may not write the vault's state (another user's vault, a
// read-only disk): readers go on with the witness as it was.
var errWitnessReadOnly = errors.New("this machine's witness of the log was not updated")

// updateWitness applies fn to the witness under its lock and saves it.
func (l *Log) updateWitness(fn func(w *witness) bool) error {
	unlock, err := l.v.Lock(witnessLock)
	if vault.IsReadOnly(err) {
		return fmt.Errorf("%w: %w", errWitnessReadOnly, err)
	}
	if err != nil {
		return err
	}
	defer unlock()
	w := l.loadWitness()
	if !fn(&w) {
		return nil
	}
	doc, err := encodeWitness(w)
	if err != nil {
		return fmt.Errorf("encode %s: %w", witnessFile, err)
	}
	err = l.writeStateDoc(witnessFile, doc)
	if err == nil {
		l.remember(doc, w)
	}
	if vault.IsReadOnly(err) {
		return fmt.Errorf("%w: %w", errWitnessReadOnly, err)
	}
	return err
}

// head is the newest signed entry of a feed found in the files.
type head struct {
	Seq  int64
	Hash string
	Time time.Time
	// entry is the head entry itself, for checking its signature.
	entry *Entry
}

// feedScan is what [Log.scanFeeds] found: the heads of every feed, and
// what the witness should learn (files scanned further, heads above it).
type feedScan struct {
	heads   map[string]head
	changed map[string]scanned
	// raise holds the heads above the witness as the scan read it, their
	// signatures not yet checked: [Log.applyScan] checks those still
	// above the witness it updates. Most are not by then: a writer on
	// this machine records its own entries in the witness right after
	// writing them, so a scan that caught them in between need not check
	// them (a signature check was a tenth of an append).
	raise map[string]head
	// w is the witness as it was read before the scan.
	w witness
	// suspect are the writers whose files no longer hold what this
	// machine saw (see continuity): their heads do not raise the witness,
	// so that the witness keeps what was seen and verify names the rest.
	suspect map[string]bool
}

// continuity checks, as a scan reads a feed file's new entries of its own
// writer, that they continue what this machine saw: the first entry after
// the part scanned before links to the entry that part ended with, and
// the entry numbered as the witness's head of the feed is that entry
// (same hash). Neither holds when the file was rewritten (re-signed,
// restored and appended to, or replaced by a copy of the vault appending
// under the same writer: the same number with other bytes).
type continuity struct {
	linked  bool // the link after the part scanned before was checked
	badLink bool
	sawHead bool // the witness's head is here, with its hash
	other   bool // an entry with the head's number but another hash
}

func (c *continuity) check(e *Entry, from int64, before scanned, head seen) {
	if from > 0 && !c.linked && before.Writer == e.Writer {
		c.linked = true
		c.badLink = e.Seq != before.Seq+1 || e.Prev != before.Hash
	}
	if head.Seq > 0 && e.Seq == head.Seq {
		if e.Hash == head.Hash {
			c.sawHead = true
		} else {
			c.other = true
		}
	}
}

func (c *continuity) broken() bool { return c.badLink || (c.other && !c.sawHead) }

// applyScan records sc in w: the files scanned, and the heads still above
// w whose signature verifies, so that a forged entry cannot make this
// machine report later "removals".
func (l *Log) applyScan(sc *feedScan, w *witness, stream string) error {
	for rel, s := range sc.changed {
		w.Files[rel] = s
	}
	var (
		tv      *trustView
		first   = map[string][]ed25519.PublicKey{}
		rotated = map[string]ed25519.PublicKey{}
	)
	for writer, h := range sc.raise {
		if h.Seq <= w.get(stream, writer).Seq {
			continue
		}
		if tv == nil {
			kr, err := l.keyring()
			if err != nil {
				return err
			}
			if tv, err = l.newTrustView(kr); err != nil {
				return err
			}
		}
		// Only a key this machine trusts for the writer raises the
		// witness; a writer seen for the first time gets its key pinned.
		mode, keys, isFirst := tv.writer(writer)
		sig, err := b64.DecodeString(h.entry.Sig)
		if mode != trustKeys || err != nil || h.entry.Agent != WriterAgent(writer) || !verifies(keys, h.entry.Canonical(), sig) {
			continue
		}
		w.raise(stream, writer, seen{Seq: h.Seq, Hash: h.Hash, Time: h.Time})
		if isFirst {
			first[writer] = keys
		} else if k := signedWith(keys, h.entry.Canonical(), sig); k != nil && !tv.pinnedAs(writer, k) {
			// Reached by a rotation the pinned key signed: pinned too,
			// so it stays accepted whatever IDENTITY.md says later.
			rotated[writer] = k
		}
	}
	if len(first) == 0 && len(rotated) == 0 {
		return nil
	}
	now := l.opts.Now()
	err := l.updatePins(func(p *pinSet) bool {
		changed := false
		for writer, keys := range first {
			if _, ok := p.Writers[writer]; !ok {
				changed = p.pin(writer, keys, pinFirstUse, now) || changed
			}
		}
		for writer, k := range rotated {
			if _, ok := p.Writers[writer]; ok {
				changed = p.pin(writer, []ed25519.PublicKey{k}, pinRotation, now) || changed
			}
		}
		return changed
	})
	if vault.IsReadOnly(err) {
		return nil // pinned by a run that may write .nexus/state/
	}
	return err
}

// empty reports whether the scan found nothing the witness lacks.
func (sc *feedScan) empty() bool { return len(sc.changed) == 0 && len(sc.raise) == 0 }

// refresh brings the witness up to date with the feed files of stream,
// parsing only what was added to each file since it was last scanned, and
// returns the heads of every feed found. A feed's head raises the witness
// only when its signature verifies, so a forged entry cannot make this
// machine report later "removals". When nothing is new, the witness is
// neither locked nor written.
func (l *Log) refresh(stream string, files []logFile) (map[string]head, error) {
	sc, err := l.scanFeeds(stream, files, "")
	if err != nil || sc.empty() {
		return sc.heads, err
	}
	var aerr error
	err = l.updateWitness(func(w *witness) bool {
		aerr = l.applyScan(&sc, w, stream)
		return aerr == nil
	})
	if err == nil {
		err = aerr
	}
	return sc.heads, err
}

// scanFeeds is the reading half of [Log.refresh]: it reads the witness
// and what is new in the feed files, and writes nothing. An append skips
// the files of its own writer's feed (skip): it reads the end of its file
// under the feed's lock and records its own entries in the witness itself.
func (l *Log) scanFeeds(stream string, files []logFile, skip string) (feedScan, error) {
	w := l.loadWitness()
	res := feedScan{heads: map[string]head{}, changed: map[string]scanned{}, raise: map[string]head{}, w: w}
	heads, changed := res.heads, res.changed
	for _, lf := range files {
		if lf.legacy || (skip != "" && lf.writer == skip) {
			continue
		}
		sc := w.Files[lf.rel]
		f, err := vault.OpenFile(l.abs(lf.rel), os.O_RDONLY, 0)
		if err != nil {
			continue // gone meanwhile
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			continue
		}
		from := int64(0)
		if sc.Offset > 0 && st.Size() >= sc.Offset {
			if a, err := anchorAt(f, sc.Offset); err == nil && a == sc.Anchor {
				from = sc.Offset
			}
		}
		if from == 0 {
			sc = scanned{}
		}
		var last *Entry
		var cont continuity
		if from < st.Size() {
			data := make([]byte, st.Size()-from)
			if _, err := f.ReadAt(data, from); err != nil && !errors.Is(err, io.EOF) {
				f.Close()
				return res, fmt.Errorf("read %s: %w", lf.rel, err)
			}
			p := newParser(data, from, 0, stream, lf.rel)
			end := from
			for {
				e, ok := p.next()
				if !ok {
					break
				}
				if inProgress(&e, data, from) {
					break
				}
				end = e.End
				if e.Signed && e.feed && !e.Torn {
					c := e
					last = &c
					if e.Writer == lf.writer {
						cont.check(&e, from, sc, w.get(stream, lf.writer))
					}
				}
			}
			sc.Offset = end
			sc.Anchor, _ = anchorAt(f, end)
			if last != nil {
				sc.Writer, sc.Seq, sc.Hash = last.Writer, last.Seq, last.Hash
			}
			if cont.broken() {
				// Not recorded as scanned: scanned again next time, so
				// that verify keeps naming it until a person acts.
				if res.suspect == nil {
					res.suspect = map[string]bool{}
				}
				res.suspect[lf.writer] = true
			} else {
				changed[lf.rel] = sc
			}
		}
		f.Close()
		if sc.Writer != "" {
			h := heads[sc.Writer]
			if sc.Seq > h.Seq {
				h = head{Seq: sc.Seq, Hash: sc.Hash}
				if last != nil && last.Seq == sc.Seq {
					h.entry, h.Time = last, last.Time
				}
				heads[sc.Writer] = h
			}
		}
	}
	// Heads above the witness: candidates for raising it, checked when
	// the witness is updated (applyScan).
	for writer, h := range heads {
		if h.Seq <= w.get(stream, writer).Seq || res.suspect[writer] {
			continue
		}
		if h.entry == nil {
			continue // seen before, in a scan whose witness update was lost
		}
		res.raise[writer] = h
	}
	return res, nil
}

// sawSet is the highest entry of each feed that a read returned.
type sawSet map[string]int64

// see notes e, returned by a read.
func (s sawSet) see(e *Entry) {
	if e.Signed && e.feed && !e.Torn && e.Seq > s[e.Writer] {
		s[e.Writer] = e.Seq
	}
}

// advance brings the witness up to date after a read returned entries
// above it (SPEC §4: reading entries advances the witness, not only
// appending), so that a feed later restored from an older copy is named
// on this machine even if its writer never appends again. A read that
// returned nothing new costs a look at the witness this process already
// decoded, or one read of it; otherwise it is a [Log.refresh], which
// parses only what was added to the files since the last one. A witness
// that cannot be written does not fail the read.
func (l *Log) advance(files []logFile, saw sawSet) {
	if len(saw) == 0 {
		return
	}
	above := func(w witness) bool {
		for writer, seq := range saw {
			if seq > w.get(streamLive, writer).Seq {
				return true
			}
		}
		return false
	}
	l.witMu.Lock()
	cached := l.witDoc != nil && !above(l.wit)
	l.witMu.Unlock()
	if cached || !above(l.loadWitness()) {
		return
	}
	if _, err := l.refresh(streamLive, files); err != nil && !errors.Is(err, errWitnessReadOnly) {
		l.opts.Logger.Warn("live log: the witness was not advanced after a read", "err", err)
	}
}
