package livelog

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nexus-memory/nexus/identity"
)

// rec is what verification keeps of each signed feed entry: enough to
// check sequence, links and cites after one pass over the files.
type rec struct {
	seq    int64
	hash   uint64 // first 8 bytes of the chain hash
	file   int32
	line   int32
	offset int64
}

// citePrefix decodes the first 8 bytes of a cite's 16-character hash.
func citePrefix(s string) uint64 {
	raw, err := b64.DecodeString(s)
	if err != nil || len(raw) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(raw[:8])
}

// verifyFeeds checks the feed files of one stream (see [Log.Verify]) in
// two steps: one pass over the files classifies every block and notes
// what each signed entry claims (its number, its predecessor, what it
// cites), queuing its signature; then the claims are checked against
// each other and against this machine's witness: forks, gaps and cut-off
// tails per feed, links that cross files, cited entries of other feeds.
func (l *Log) verifyFeeds(ctx context.Context, tv *trustView, stream string, files []logFile, sizes []int64, wit witness, r *Report) error {
	kr := tv.kr
	c := &feedCheck{kr: kr, trust: tv, byWriter: map[string]*writerTrust{}, stream: stream, files: files, wit: wit, sigs: newSigChecker(kr), recs: map[string][]rec{}}
	rels := make([]string, len(files))
	for i, lf := range files {
		rels[i] = lf.rel
		r.Files = append(r.Files, lf.rel)
		marks := fileMarks{lastSeq: map[string]int64{}, lastHash: map[string]uint64{}, hashes: map[uint64]int64{}}
		err := l.walk(ctx, lf.rel, 0, sizes[i], 1, stream, false, func(e *Entry) error {
			c.entry(int32(i), lf, &marks, e)
			return nil
		})
		if err != nil {
			c.sigs.abandon()
			return err
		}
	}
	c.findings = append(c.findings, c.sigs.wait()...)
	bySeq := map[string]map[int64][]rec{}
	for _, w := range c.writers() {
		bySeq[w] = c.checkFeed(w)
	}
	c.checkLinks(bySeq)
	c.checkCites(bySeq)
	c.pinFirstUse(r)
	addFindings(r, c.findings, rels, c.signed)
	return nil
}

// pinFirstUse notes, in r, the writers seen here for the first time
// whose entries all verified with their keys: [Log.Verify] pins them.
func (c *feedCheck) pinFirstUse(r *Report) {
	bad := map[string]bool{}
	for _, f := range c.findings {
		if f.Status == StatusEdited || f.Status == StatusForged {
			bad[f.Writer] = true
		}
	}
	for w, wt := range c.byWriter {
		if wt.first && !bad[w] {
			if r.firstUse == nil {
				r.firstUse = map[string][]ed25519.PublicKey{}
			}
			r.firstUse[w] = wt.keys
		}
	}
}

// feedCheck is one stream's feed files under [Log.verifyFeeds].
type feedCheck struct {
	kr       identity.Keyring
	trust    *trustView
	byWriter map[string]*writerTrust
	stream   string
	files    []logFile
	wit      witness
	sigs     *sigChecker
	findings []Finding
	signed   int              // signed entries seen
	recs     map[string][]rec // every signed feed entry, by writer
	// links to check after the pass: entries whose prev is not the entry
	// before them in their own file.
	links []feedLink
	cites []citeRef // every cite, to check after the pass
}

// feedLink is an entry whose predecessor is to be looked up in its feed.
type feedLink struct {
	f      Finding
	writer string
	seq    int64
	prev   uint64
}

// citeRef is one cite of an entry (f).
type citeRef struct {
	f Finding
	c Cite
}

// fileMarks is what the pass remembers within one file.
type fileMarks struct {
	lastSeq  map[string]int64  // by writer, the last entry's number
	lastHash map[string]uint64 // and its hash
	hashes   map[uint64]int64  // every entry's hash, to its offset
}

// entry classifies one block of file number file (lf) and notes its
// claims.
func (c *feedCheck) entry(file int32, lf logFile, marks *fileMarks, e *Entry) {
	f := Finding{File: e.Segment, Line: e.Line, Offset: e.Offset, Agent: e.Agent, Writer: e.Writer, Seq: e.Seq, Time: e.Time, Summary: clip(e.Summary, 120)}
	kind, own, sig := classify(e, f)
	if kind == notSigned {
		c.findings = append(c.findings, own)
		return
	}
	c.signed++
	if !e.feed {
		c.add(f, StatusReordered, "an entry of the older single log, moved into a feed file")
		return
	}
	h := prefix8(e.Hash)
	if at, dup := marks.hashes[h]; dup {
		c.add(f, StatusReordered, fmt.Sprintf("a copy of the entry at byte %d of this file (seq %d)", at, e.Seq))
		return
	}
	marks.hashes[h] = e.Offset
	c.recs[e.Writer] = append(c.recs[e.Writer], rec{seq: e.Seq, hash: h, file: file, line: int32(e.Line), offset: e.Offset})
	if lf.writer != "" && lf.writer != e.Writer {
		c.add(f, StatusReordered, "an entry of "+e.Writer+"'s feed, found in "+lf.writer+"'s file")
	}
	if kind == headless {
		c.findings = append(c.findings, own)
		return
	}
	c.claims(marks, e, f, h)
	switch {
	case e.Agent != WriterAgent(e.Writer):
		c.add(f, StatusForged, "the entry names agent "+e.Agent+" but belongs to "+e.Writer+"'s feed")
	case kind == badSignature:
		c.findings = append(c.findings, own)
	default:
		c.checkSig(f, e, sig)
	}
}

// writerTrust is how one writer's entries are judged (see
// [trustView.writer]), worked out once per writer.
type writerTrust struct {
	mode  trustMode
	keys  []ed25519.PublicKey
	first bool
	pub   []byte // the key a batch checks its entries with
	// explain names an entry whose signature the keys refuse.
	explain func(f Finding, msg, sig []byte) Finding
}

func (c *feedCheck) writerTrust(writer string) *writerTrust {
	if wt, ok := c.byWriter[writer]; ok {
		return wt
	}
	wt := &writerTrust{}
	wt.mode, wt.keys, wt.first = c.trust.writer(writer)
	if wt.mode == trustKeys {
		agent, device, _ := strings.Cut(writer, "@")
		wt.pub = wt.keys[len(wt.keys)-1]
		if k, ok := c.kr.Key(agent, device); ok && hasKey(wt.keys, k) {
			wt.pub = k
		}
		seen := c.wit.get(c.stream, writer).Seq
		keys := wt.keys
		wt.explain = func(f Finding, msg, sig []byte) Finding {
			if wt.first {
				return sigFailure(c.kr, f, f.Agent, msg, sig)
			}
			return c.trust.explain(f, keys, seen, msg, sig)
		}
	}
	c.byWriter[writer] = wt
	return wt
}

// checkSig checks the signature of e (a feed entry; f its finding) with
// the keys this machine accepts for its writer.
func (c *feedCheck) checkSig(f Finding, e *Entry, sig []byte) {
	wt := c.writerTrust(e.Writer)
	switch wt.mode {
	case trustNoKey:
		_, device, _ := strings.Cut(e.Writer, "@")
		c.add(f, StatusForged, fmt.Sprintf("IDENTITY.md of %s lists no key for device %s and this machine pinned none: no known key signed it", e.Agent, device))
	case trustNewWriter:
		// Rare (until a person trusts the writer): checked one by one.
		if !verifies(wt.keys, e.Canonical(), sig) {
			c.findings = append(c.findings, sigFailure(c.kr, f, e.Agent, e.Canonical(), sig))
			return
		}
		c.add(f, StatusNewWriter, fmt.Sprintf("%s is a device this machine has not seen %s write from, with a key (%s) that is none of those it pinned for %s: if you added that device, accept it with 'nexus log trust %s'", e.Writer, e.Agent, fingerprints(wt.keys), e.Agent, e.Writer))
	default:
		c.sigs.checkWith(f, e.Agent, wt.pub, e, sig, wt.keys, wt.explain)
	}
}

// add records f with a status and detail.
func (c *feedCheck) add(f Finding, s Status, detail string) {
	f.Status, f.Detail = s, detail
	c.findings = append(c.findings, f)
}

// claims checks e's number against the entry before it in the file, and
// notes the links and cites to check after the pass.
func (c *feedCheck) claims(marks *fileMarks, e *Entry, f Finding, h uint64) {
	if last, ok := marks.lastSeq[e.Writer]; ok && e.Seq <= last {
		c.add(f, StatusReordered, fmt.Sprintf("seq %d comes after seq %d in this file", e.Seq, last))
	}
	prev := prefix8(e.Prev)
	switch {
	case e.Seq == 1:
		if e.Prev != genesis.String() {
			c.links = append(c.links, feedLink{f, e.Writer, e.Seq, prev})
		}
	case marks.lastSeq[e.Writer] == e.Seq-1 && marks.lastHash[e.Writer] == prev:
	default:
		c.links = append(c.links, feedLink{f, e.Writer, e.Seq, prev})
	}
	marks.lastSeq[e.Writer], marks.lastHash[e.Writer] = e.Seq, h
	for _, ct := range e.Cites {
		c.cites = append(c.cites, citeRef{f, ct})
	}
}

// writers are the feeds to check, sorted: those with entries here and
// those this machine saw before.
func (c *feedCheck) writers() []string {
	writers := make([]string, 0, len(c.recs))
	for w := range c.recs {
		writers = append(writers, w)
	}
	for w := range c.wit.Feeds[c.stream] {
		if _, ok := c.recs[w]; !ok {
			writers = append(writers, w)
		}
	}
	sort.Strings(writers)
	return writers
}

// at is where entry x of writer's feed is.
func (c *feedCheck) at(writer string, x rec) Finding {
	return Finding{File: c.files[x.file].rel, Line: int(x.line), Offset: x.offset, Agent: WriterAgent(writer), Writer: writer, Seq: x.seq}
}

// checkFeed reports the forks, gaps and cut-off tail of writer's feed and
// returns its entries by number (copies of one entry counted once).
func (c *feedCheck) checkFeed(w string) map[int64][]rec {
	m := map[int64][]rec{}
	for _, x := range c.recs[w] {
		dup := false
		for _, y := range m[x.seq] {
			dup = dup || y.hash == x.hash
		}
		if !dup {
			m[x.seq] = append(m[x.seq], x)
		}
	}
	seqs := make([]int64, 0, len(m))
	for s := range m {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	for _, s := range seqs {
		if xs := m[s]; len(xs) > 1 {
			for _, x := range xs {
				c.add(c.at(w, x), StatusForked, fmt.Sprintf("%d different entries of %s are numbered %d: the agent appended on two machines with one device name (give each its own: 'nexus device name NAME'); all are kept", len(xs), w, s))
			}
		}
	}
	prevSeq := int64(0)
	for _, s := range seqs {
		if s > prevSeq+1 {
			f := c.at(w, m[s][0])
			f.Line, f.Summary = 0, ""
			c.add(f, StatusRemoved, fmt.Sprintf("%s of %s %s missing before this one (deleted)", span(prevSeq+1, s-1), w, plural(prevSeq+1, s-1, "is", "are")))
		}
		prevSeq = s
	}
	c.checkTail(w, m, prevSeq)
	c.checkSeenHead(w, m)
	return m
}

// checkSeenHead compares the highest entry of writer's feed this machine
// saw with the entry of that number here: other bytes under the same
// number are named (the feed was rewritten, or a copy of the vault
// appended as the same writer).
func (c *feedCheck) checkSeenHead(w string, m map[int64][]rec) {
	seen := c.wit.get(c.stream, w)
	xs := m[seen.Seq]
	if seen.Seq == 0 || seen.Hash == "" || len(xs) == 0 {
		return
	}
	p := prefix8(seen.Hash)
	for _, x := range xs {
		if x.hash == p {
			return
		}
	}
	for _, x := range xs {
		c.add(c.at(w, x), StatusRemoved, fmt.Sprintf("this machine saw entry %d of %s as %s…, and the one numbered %d here is another: the feed was rewritten, or a copy of this vault appended as %s (a copy needs a device name of its own: nexus device name NAME); restore the feed from a backup, or accept it as it is with 'nexus log trust %s'", seen.Seq, w, clip(seen.Hash, 13), seen.Seq, w, w))
	}
}

// checkTail reports entries this machine saw in writer's feed beyond its
// highest here (top).
func (c *feedCheck) checkTail(w string, m map[int64][]rec, top int64) {
	seen := c.wit.get(c.stream, w)
	if seen.Seq <= top {
		return
	}
	f := Finding{Status: StatusRemoved, Writer: w, Agent: WriterAgent(w), Seq: top + 1,
		Detail: fmt.Sprintf("%s of %s %s cut off the end of its feed (deleted, or an older copy of the file restored): this machine saw it reach %d (%s…)", span(top+1, seen.Seq), w, plural(top+1, seen.Seq, "was", "were"), seen.Seq, clip(seen.Hash, 13))}
	if len(m) > 0 {
		f.File = c.files[m[top][0].file].rel
	} else {
		f.Detail = fmt.Sprintf("every entry of %s is gone: this machine saw its feed reach %d", w, seen.Seq)
	}
	c.findings = append(c.findings, f)
}

// checkLinks looks up the predecessors not found before them in their
// own file.
func (c *feedCheck) checkLinks(bySeq map[string]map[int64][]rec) {
	for _, lk := range c.links {
		m := bySeq[lk.writer]
		if lk.seq == 1 {
			c.add(lk.f, StatusEdited, "the first entry of a feed must follow nothing (prev of 43 A's)")
			continue
		}
		ok := false
		for _, x := range m[lk.seq-1] {
			ok = ok || x.hash == lk.prev
		}
		if ok || len(m[lk.seq-1]) == 0 {
			continue // linked across files, or a gap reported by checkFeed
		}
		f := lk.f
		f.Status, f.Detail = StatusRemoved, fmt.Sprintf("the entry it was signed after (seq %d) is gone; the one numbered %d here is another", lk.seq-1, lk.seq-1)
		for s, xs := range m {
			for _, x := range xs {
				if x.hash == lk.prev && s != lk.seq-1 {
					f.Status, f.Detail = StatusReordered, fmt.Sprintf("its predecessor is elsewhere in the feed (numbered %d)", s)
				}
			}
		}
		c.findings = append(c.findings, f)
	}
}

// checkCites looks up the entries of other feeds that entries cite.
func (c *feedCheck) checkCites(bySeq map[string]map[int64][]rec) {
	for _, ct := range c.cites {
		f := ct.f
		cited := ct.c
		f.Cited = &cited
		if xs := bySeq[cited.Writer][cited.Seq]; len(xs) > 0 {
			p := citePrefix(cited.Hash)
			match := false
			for _, x := range xs {
				match = match || x.hash == p
			}
			if !match {
				c.add(f, StatusRemoved, fmt.Sprintf("it cites %s#%d, but the entry numbered %d here is another one (the cited one was replaced)", cited.Writer, cited.Seq, cited.Seq))
			}
			continue
		}
		if c.wit.get(c.stream, cited.Writer).Seq >= cited.Seq {
			c.add(f, StatusRemoved, fmt.Sprintf("it cites %s#%d, which this machine saw but is no longer here", cited.Writer, cited.Seq))
		} else {
			c.add(f, StatusNotHereYet, fmt.Sprintf("it cites %s#%d, which has not reached this machine yet", cited.Writer, cited.Seq))
		}
	}
}

// span renders a range of sequence numbers: "7" or "7-9".
func span(a, b int64) string {
	if a == b {
		return "entry " + strconv.FormatInt(a, 10)
	}
	return "entries " + strconv.FormatInt(a, 10) + "-" + strconv.FormatInt(b, 10)
}

// plural is one when a..b is a single entry, else many.
func plural(a, b int64, one, many string) string {
	if a == b {
		return one
	}
	return many
}
