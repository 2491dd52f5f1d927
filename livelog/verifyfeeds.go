package livelog

import (
	"context"
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

func prefix8(s string) uint64 {
	h, ok := parseHash(s)
	if !ok {
		return 0
	}
	return binary.BigEndian.Uint64(h[:8])
}

// citePrefix decodes the first 8 bytes of a cite's 16-character hash.
func citePrefix(s string) uint64 {
	raw, err := b64.DecodeString(s)
	if err != nil || len(raw) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(raw[:8])
}

// verifyFeeds checks the feed files of one stream (see [Log.Verify]).
func (l *Log) verifyFeeds(ctx context.Context, kr identity.Keyring, stream string, files []logFile, sizes []int64, wit witness, r *Report) error {
	jobs, stop, bads := startSigWorkers(kr)
	var (
		findings []Finding
		batch    sigBatch
		recs     = map[string][]rec{} // by writer
		// links to check after the pass: entries whose prev is not the
		// entry before them in their own file.
		links []struct {
			f      Finding
			writer string
			seq    int64
			prev   uint64
		}
		cites []struct {
			f Finding
			c Cite
		}
		signed int
	)
	type fileState struct {
		lastSeq  map[string]int64
		lastHash map[string]uint64
		hashes   map[uint64]int64
	}
	for i, lf := range files {
		r.Files = append(r.Files, lf.rel)
		fs := fileState{lastSeq: map[string]int64{}, lastHash: map[string]uint64{}, hashes: map[uint64]int64{}}
		err := l.walk(ctx, lf.rel, 0, sizes[i], 1, stream, false, func(e *Entry) error {
			f := Finding{File: e.Segment, Line: e.Line, Offset: e.Offset, Agent: e.Agent, Writer: e.Writer, Seq: e.Seq, Time: e.Time, Summary: clip(e.Summary, 120)}
			switch {
			case e.Torn:
				f.Status, f.Detail = StatusTruncated, "record cut short (torn tail from a crash, or the file was truncated)"
				if e.steppedOver {
					f.Recovered = true
					f.Detail = "record cut short by a crash; a later append found it and went on on a clean line (never acknowledged, nothing acknowledged is lost)"
				}
				findings = append(findings, f)
				return nil
			case !e.Signed && e.damaged:
				f.Status, f.Detail = StatusEdited, "its signature line is damaged"
				findings = append(findings, f)
				return nil
			case !e.Signed:
				f.Status, f.Detail = StatusUnsigned, "text without a signature (typed by hand?)"
				if e.Hand {
					f.Agent = ""
				}
				findings = append(findings, f)
				return nil
			case !e.feed:
				signed++
				f.Status, f.Detail = StatusReordered, "an entry of the older single log, moved into a feed file"
				findings = append(findings, f)
				return nil
			}
			signed++
			h := prefix8(e.Hash)
			if at, dup := fs.hashes[h]; dup {
				f.Status, f.Detail = StatusReordered, fmt.Sprintf("a copy of the entry at byte %d of this file (seq %d)", at, e.Seq)
				findings = append(findings, f)
				return nil
			}
			fs.hashes[h] = e.Offset
			recs[e.Writer] = append(recs[e.Writer], rec{seq: e.Seq, hash: h, file: int32(i), line: int32(e.Line), offset: e.Offset})
			if lf.writer != "" && lf.writer != e.Writer {
				f.Status, f.Detail = StatusReordered, "an entry of "+e.Writer+"'s feed, found in "+lf.writer+"'s file"
				findings = append(findings, f)
			}
			if e.damaged {
				f.Status, f.Detail = StatusEdited, "signature line without a valid entry header (the header was changed or removed)"
				findings = append(findings, f)
				return nil
			}
			if last, ok := fs.lastSeq[e.Writer]; ok && e.Seq <= last {
				f.Status, f.Detail = StatusReordered, fmt.Sprintf("seq %d comes after seq %d in this file", e.Seq, last)
				findings = append(findings, f)
			}
			prev := prefix8(e.Prev)
			switch {
			case e.Seq == 1:
				if e.Prev != genesis.String() {
					links = append(links, struct {
						f      Finding
						writer string
						seq    int64
						prev   uint64
					}{f, e.Writer, e.Seq, prev})
				}
			case fs.lastSeq[e.Writer] == e.Seq-1 && fs.lastHash[e.Writer] == prev:
			default:
				links = append(links, struct {
					f      Finding
					writer string
					seq    int64
					prev   uint64
				}{f, e.Writer, e.Seq, prev})
			}
			fs.lastSeq[e.Writer], fs.lastHash[e.Writer] = e.Seq, h
			for _, c := range e.Cites {
				cites = append(cites, struct {
					f Finding
					c Cite
				}{f, c})
			}
			if e.Agent != WriterAgent(e.Writer) {
				f.Status, f.Detail = StatusForged, "the entry names agent "+e.Agent+" but belongs to "+e.Writer+"'s feed"
				findings = append(findings, f)
				return nil
			}
			sig, err := b64.DecodeString(e.Sig)
			if err != nil {
				f.Status, f.Detail = StatusEdited, "signature is not valid base64url"
				findings = append(findings, f)
				return nil
			}
			_, device, _ := strings.Cut(e.Writer, "@")
			pub, _ := kr.Key(e.Agent, device)
			batch = append(batch, sigJob{f: f, agent: e.Agent, pub: pub, msg: e.Canonical(), sig: sig})
			if len(batch) == 256 {
				jobs <- batch
				batch = nil
			}
			return nil
		})
		if err != nil {
			stop()
			return err
		}
	}
	if len(batch) > 0 {
		jobs <- batch
	}
	stop()
	findings = append(findings, *bads...)

	// Per feed: forks, gaps, cut-off tails.
	bySeq := map[string]map[int64][]rec{}
	at := func(writer string, x rec) Finding {
		return Finding{File: files[x.file].rel, Line: int(x.line), Offset: x.offset, Agent: WriterAgent(writer), Writer: writer, Seq: x.seq}
	}
	writers := make([]string, 0, len(recs))
	for w := range recs {
		writers = append(writers, w)
	}
	for w := range wit.Feeds[stream] {
		if _, ok := recs[w]; !ok {
			writers = append(writers, w)
		}
	}
	sort.Strings(writers)
	for _, w := range writers {
		rs := recs[w]
		m := map[int64][]rec{}
		for _, x := range rs {
			dup := false
			for _, y := range m[x.seq] {
				dup = dup || y.hash == x.hash
			}
			if !dup {
				m[x.seq] = append(m[x.seq], x)
			}
		}
		bySeq[w] = m
		seqs := make([]int64, 0, len(m))
		for s := range m {
			seqs = append(seqs, s)
		}
		sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
		for _, s := range seqs {
			if xs := m[s]; len(xs) > 1 {
				for _, x := range xs {
					f := at(w, x)
					f.Status = StatusForked
					f.Detail = fmt.Sprintf("%d different entries of %s are numbered %d: the agent appended on two machines with one device name (give each its own: 'nexus device name NAME'); all are kept", len(xs), w, s)
					findings = append(findings, f)
				}
			}
		}
		prevSeq := int64(0)
		for _, s := range seqs {
			if s > prevSeq+1 {
				f := at(w, m[s][0])
				f.Status = StatusRemoved
				f.Detail = fmt.Sprintf("%s of %s %s missing before this one (deleted)", span(prevSeq+1, s-1), w, plural(prevSeq+1, s-1, "is", "are"))
				f.Line, f.Summary = 0, ""
				findings = append(findings, f)
			}
			prevSeq = s
		}
		if seen := wit.get(stream, w); seen.Seq > prevSeq {
			f := Finding{Status: StatusRemoved, Writer: w, Agent: WriterAgent(w), Seq: prevSeq + 1,
				Detail: fmt.Sprintf("%s of %s %s cut off the end of its feed: this machine saw it reach %d (%s…)", span(prevSeq+1, seen.Seq), w, plural(prevSeq+1, seen.Seq, "was", "were"), seen.Seq, clip(seen.Hash, 13))}
			if len(seqs) > 0 {
				x := m[prevSeq][0]
				f.File = files[x.file].rel
			} else {
				f.Detail = fmt.Sprintf("every entry of %s is gone: this machine saw its feed reach %d", w, seen.Seq)
			}
			findings = append(findings, f)
		}
	}
	// Links whose predecessor was not the entry before in the same file.
	for _, lk := range links {
		m := bySeq[lk.writer]
		if lk.seq == 1 {
			f := lk.f
			f.Status, f.Detail = StatusEdited, "the first entry of a feed must follow nothing (prev of 43 A's)"
			findings = append(findings, f)
			continue
		}
		ok := false
		for _, x := range m[lk.seq-1] {
			ok = ok || x.hash == lk.prev
		}
		if ok || len(m[lk.seq-1]) == 0 {
			continue // linked across files, or a gap reported above
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
		findings = append(findings, f)
	}
	// Cited entries of other feeds.
	for _, ct := range cites {
		f := ct.f
		c := ct.c
		f.Cited = &c
		xs := bySeq[ct.c.Writer][ct.c.Seq]
		if len(xs) > 0 {
			p := citePrefix(ct.c.Hash)
			match := false
			for _, x := range xs {
				match = match || x.hash == p
			}
			if !match {
				f.Status, f.Detail = StatusRemoved, fmt.Sprintf("it cites %s#%d, but the entry numbered %d here is another one (the cited one was replaced)", ct.c.Writer, ct.c.Seq, ct.c.Seq)
				findings = append(findings, f)
			}
			continue
		}
		if wit.get(stream, ct.c.Writer).Seq >= ct.c.Seq {
			f.Status, f.Detail = StatusRemoved, fmt.Sprintf("it cites %s#%d, which this machine saw but is no longer here", ct.c.Writer, ct.c.Seq)
		} else {
			f.Status, f.Detail = StatusNotHereYet, fmt.Sprintf("it cites %s#%d, which has not reached this machine yet", ct.c.Writer, ct.c.Seq)
		}
		findings = append(findings, f)
	}
	order := map[string]int{}
	for i, lf := range files {
		order[lf.rel] = i
	}
	sort.SliceStable(findings, func(i, j int) bool {
		a, b := findings[i], findings[j]
		if a.File != b.File {
			return order[a.File] < order[b.File]
		}
		return a.Offset < b.Offset
	})
	badPos := map[string]bool{}
	for _, f := range findings {
		r.Counts[f.Status]++
		if !f.Benign() && f.Status != StatusTruncated && f.Line > 0 {
			badPos[f.File+":"+strconv.FormatInt(f.Offset, 10)] = true
		}
	}
	r.Entries += signed
	r.Counts[StatusIntact] += signed - len(badPos)
	r.Findings = append(r.Findings, findings...)
	return nil
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
