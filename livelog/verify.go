package livelog

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// Status classifies one block of a log file in a [Report].
type Status string

// The classifications [Log.Verify] gives.
const (
	// StatusIntact: the signature verifies with the agent's key and the
	// entry follows the one before it in the chain.
	StatusIntact Status = "intact"
	// StatusEdited: the signature does not verify (the text was changed
	// after signing), or the signature line is damaged or has lost its
	// header.
	StatusEdited Status = "edited"
	// StatusForged: the signature was made with another agent's key, or
	// the entry names an agent that has no key.
	StatusForged Status = "forged"
	// StatusReordered: the entry's predecessor is elsewhere in the log.
	StatusReordered Status = "reordered"
	// StatusRemoved: the entry's predecessor is not in the log (an entry
	// was deleted before it), or entries at the end of the log were
	// removed.
	StatusRemoved Status = "removed"
	// StatusForked: two different entries of one writer with the same
	// number: the same agent appended on two machines with one device
	// name. Both are kept.
	StatusForked Status = "forked"
	// StatusNotHereYet: an entry cites an entry of another feed that this
	// machine has not received yet (a sync tool is still copying it). Once
	// this machine has seen that feed reach past it, a missing cited entry
	// is reported as removed. Not a problem unless verification is strict.
	StatusNotHereYet Status = "not here yet"
	// StatusTruncated: a record cut short, by a crash (a torn tail) or by
	// truncating the file.
	StatusTruncated Status = "truncated"
	// StatusUnsigned: text a person typed in by hand. Kept and shown; not
	// an error unless verification is strict.
	StatusUnsigned Status = "unsigned"
	// StatusKeyChanged: the entry verifies with a key IDENTITY.md lists,
	// but not with the key this machine pinned for its writer, and no
	// rotation signed by the pinned key vouches for it: not intact until a
	// person accepts the key ('nexus log trust WRITER').
	StatusKeyChanged Status = "key changed"
	// StatusNewWriter: an entry of a device this machine has not pinned,
	// of an agent whose keys it pinned on other devices, signed with a key
	// it does not know: not intact until a person accepts the writer
	// ('nexus log trust WRITER').
	StatusNewWriter Status = "new writer"
)

// Finding is one block that is not intact.
type Finding struct {
	Status  Status    `json:"status"`
	File    string    `json:"file"`
	Line    int       `json:"line"`
	Offset  int64     `json:"offset"`
	Agent   string    `json:"agent,omitempty"`
	Writer  string    `json:"writer,omitempty"`
	Seq     int64     `json:"seq,omitempty"`
	Time    time.Time `json:"time,omitzero"`
	Summary string    `json:"summary,omitempty"`
	Detail  string    `json:"detail"`
	// Recovered marks a torn tail that a later append already found,
	// reported and stepped over: the record was never acknowledged to its
	// writer, so nothing acknowledged is missing. Listed, but a problem
	// only when verification is strict.
	Recovered bool `json:"recovered,omitempty"`
	// Cited is, for an entry citing another feed's entry that is not
	// here (removed, or not here yet), the entry it cites.
	Cited *Cite `json:"cited,omitempty"`
	// Settled marks a fork whose two machines no longer share the
	// device name (one took a name of its own, [vault.Vault.DeviceSettled]):
	// the forked entries, and those of the branch signed with the other
	// machine's key (listed in IDENTITY.md, not pinned here). The fork no
	// longer grows; both branches are kept and read. Listed, but a
	// problem only when verification is strict.
	Settled bool `json:"settled,omitempty"`
}

// Report is the result of [Log.Verify].
type Report struct {
	// Entries is the number of signed entries checked (live log and
	// decision log).
	Entries int `json:"entries"`
	// Counts holds the number of blocks of each status.
	Counts map[Status]int `json:"counts"`
	// Findings lists every block that is not intact, in file order.
	Findings []Finding `json:"findings"`
	// Files are the files checked, in chain order.
	Files []string `json:"files"`
	// Notes say what could not be done besides the check itself: the
	// witness not saved for want of write access (the check still ran).
	Notes []string `json:"notes,omitempty"`
	// firstUse are the writers seen for the first time, with the keys
	// their entries verified with: pinned once the check is done.
	firstUse map[string][]ed25519.PublicKey
}

// OK reports whether the log verified: nothing but intact entries, and, if
// not strict, unsigned hand-typed text, entries not here yet, recovered
// torn tails and settled forks.
func (r *Report) OK(strict bool) bool {
	for _, f := range r.Findings {
		if strict || !f.Benign() {
			return false
		}
	}
	return true
}

// Benign reports whether a finding is not a problem unless verification is
// strict: unsigned hand-typed text, an entry not here yet, a torn tail
// already stepped over, or a settled fork.
func (f Finding) Benign() bool {
	return f.Status == StatusUnsigned || f.Status == StatusNotHereYet || (f.Status == StatusTruncated && f.Recovered) || f.Settled
}

// Verify checks every block of the live log and the decision log: each
// signature against the agent's public keys in IDENTITY.md, each feed's
// sequence and links, the entries other feeds cite, and this machine's
// witness of what it saw before (so entries cut after it saw them stay
// reported). Signatures are checked on all cores. Appends may go on
// meanwhile; Verify checks the files as they were when it started.
// Entries of an older vault's single chain are checked as that chain.
func (l *Log) Verify(ctx context.Context) (*Report, error) {
	kr, err := identity.LoadKeyring(l.v)
	if err != nil {
		return nil, err
	}
	var tv *trustView
	r := &Report{Counts: map[Status]int{}, Findings: []Finding{}}
	for _, stream := range []string{streamLive, streamDecisions} {
		files, err := l.streamFiles(stream)
		if err != nil {
			return nil, err
		}
		// Bring the witness up to date first: what is here now counts as
		// seen (its heads' signatures checked), so a cut made later is
		// reported.
		if _, err := l.refresh(stream, files); errors.Is(err, errWitnessReadOnly) {
			// Checked all the same, against what this machine recorded
			// before; said in the report.
			if len(r.Notes) == 0 {
				r.Notes = append(r.Notes, err.Error()+"; the log was checked against what it recorded before, and a run that can write .nexus/state/ records what is here now")
			}
		} else if err != nil {
			return nil, err
		}
		wit := l.loadWitness()
		if tv == nil {
			// After the refresh, which pins writers seen for the first
			// time as it raises the witness.
			if tv, err = l.newTrustView(kr); err != nil {
				return nil, err
			}
		}
		var legacy chainFiles
		legacy.stream = stream
		var feeds []logFile
		var sizes []int64
		for _, lf := range files {
			st, err := vault.Stat(l.abs(lf.rel))
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue
				}
				return nil, err
			}
			if lf.legacy {
				legacy.files = append(legacy.files, lf.rel)
				legacy.sizes = append(legacy.sizes, st.Size())
			} else {
				feeds = append(feeds, lf)
				sizes = append(sizes, st.Size())
			}
		}
		if len(legacy.files) > 0 {
			var h pos
			hint := headFile
			if stream == streamDecisions {
				hint = decisionsHeadFile
			}
			if readJSON(l.abs(hint), &h) == nil {
				legacy.head = h.Head
			}
			if err := l.verifyChain(ctx, kr, legacy, r); err != nil {
				return nil, err
			}
		}
		if err := l.verifyFeeds(ctx, tv, stream, feeds, sizes, wit, r); err != nil {
			return nil, err
		}
	}
	if len(r.firstUse) > 0 {
		now := l.opts.Now()
		err := l.updatePins(func(p *pinSet) bool {
			changed := false
			for w, keys := range r.firstUse {
				if _, ok := p.Writers[w]; !ok {
					changed = p.pin(w, keys, pinFirstUse, now) || changed
				}
			}
			return changed
		})
		if vault.IsReadOnly(err) {
			r.Notes = append(r.Notes, "the keys of writers seen for the first time were not pinned (no write access to "+StateDir+"): "+err.Error())
		} else if err != nil {
			return nil, err
		}
	}
	l.settleForks(r)
	for _, rel := range l.unreadable() {
		r.Notes = append(r.Notes, rel+" is not a regular file (a symbolic link or a folder): no reader of the log reads it, so it was not checked; entries this machine saw in it before are reported as removed")
	}
	return r, nil
}

// settleForks marks the forks that are settled ([Finding.Settled]) and
// says so in a note per feed. A feed forks when two machines append under
// one device name; once one of them has a name of its own the fork no
// longer grows. On each machine the other's branch is signed with a key
// IDENTITY.md lists for that device name but this machine did not pin
// ("key changed"): from the first forked number on, that is the fork
// itself, not a changed key, and is settled with it. A key change before
// the fork, and every other finding, stays a problem.
func (l *Log) settleForks(r *Report) {
	// A writer has a feed in each log; a fork of one is not one of the
	// other.
	type feed struct {
		writer    string
		decisions bool
	}
	feedOf := func(f Finding) feed { return feed{f.Writer, strings.HasPrefix(f.File, DecisionsDir+"/")} }
	first := map[feed]int64{} // a settled fork's first forked number
	var order []feed
	for _, f := range r.Findings {
		if f.Status != StatusForked || f.Writer == "" {
			continue
		}
		k := feedOf(f)
		if s, ok := first[k]; ok {
			if f.Seq < s {
				first[k] = f.Seq
			}
			continue
		}
		if !l.v.DeviceSettled(WriterDevice(f.Writer)) {
			continue
		}
		first[k] = f.Seq
		order = append(order, k)
	}
	if len(first) == 0 {
		return
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		s, ok := first[feedOf(*f)]
		if !ok {
			continue
		}
		switch {
		case f.Status == StatusForked:
			f.Settled = true
			f.Detail = fmt.Sprintf("entries of %s numbered %d on two machines that both called themselves %q; one has a name of its own since, so the fork no longer grows: both branches are kept and read", f.Writer, f.Seq, WriterDevice(f.Writer))
		case f.Status == StatusKeyChanged && f.Seq >= s:
			f.Settled = true
			f.Detail += " (the other machine's branch of a settled fork)"
		}
	}
	for _, k := range order {
		which := "the live log"
		if k.decisions {
			which = "the decision log"
		}
		r.Notes = append(r.Notes, fmt.Sprintf("the feed of %s in %s forked from #%d: two machines appended as %q, and one has a name of its own since, so the fork no longer grows; both branches are kept and read (--strict counts it as a problem)", k.writer, which, first[k], WriterDevice(k.writer)))
	}
}

// unreadable lists what stands where a log file would be but is not a
// regular file (a symbolic link, a folder named like a feed): every reader
// skips it, and verify says so instead of passing over it in silence.
func (l *Log) unreadable() []string {
	var out []string
	look := func(dir string, want func(name string, de dirEnt) bool) {
		des, err := l.readDir(dir)
		if err != nil {
			return
		}
		for _, de := range des {
			if !de.regular && want(de.nfc, de) {
				out = append(out, dir+"/"+de.name)
			}
		}
	}
	feedName := func(name string, _ dirEnt) bool {
		return strings.HasSuffix(name, ".md") && !strings.HasPrefix(name, ".")
	}
	look(vault.LiveLogDir, func(name string, de dirEnt) bool {
		if de.dir && isMonth(name) {
			look(vault.LiveLogDir+"/"+de.name, feedName)
			return false
		}
		m, ok := strings.CutSuffix(name, ".md")
		return ok && isMonth(m)
	})
	look(DecisionsDir, feedName)
	// The older decision log is opened by name (a link to a file is read).
	if st, err := vault.Stat(l.abs(vault.DecisionsLog)); err == nil && !st.Mode().IsRegular() {
		out = append(out, vault.DecisionsLog)
	}
	sort.Strings(out)
	return out
}

type chainFiles struct {
	stream string
	files  []string
	sizes  []int64
	head   string // the head hint's hash, "" if unknown
}

type sigJob struct {
	f     Finding // filled in if the signature fails
	agent string
	pub   []byte // the key expected to have signed it
	msg   []byte
	sig   []byte
	// keys, for an entry of a feed, are the only keys that count (its
	// writer's pinned keys, see pins.go), and explain names the entry if
	// none verifies. nil: any key of the agent in IDENTITY.md counts.
	keys    []ed25519.PublicKey
	explain func(f Finding, msg, sig []byte) Finding
}

type sigBatch []sigJob

// verifyChain walks one chain, checking links in order and fanning
// signature checks out to one worker per core.
func (l *Log) verifyChain(ctx context.Context, kr identity.Keyring, c chainFiles, r *Report) error {
	sigs := newSigChecker(kr)
	var (
		findings []Finding
		hashes   []uint64 // 8-byte prefixes of every chain hash, in order
		breaks   []chainBreak
		signed   int
		last     = genesis.String()
		lastTorn bool
	)
	handle := func(e *Entry) error {
		lastTorn = e.Torn
		kind, f, sig := classify(e, Finding{File: e.Segment, Line: e.Line, Offset: e.Offset, Agent: e.Agent, Time: e.Time, Summary: clip(e.Summary, 120)})
		if kind == notSigned {
			findings = append(findings, f)
			return nil
		}
		signed++
		if e.Prev != last {
			breaks = append(breaks, chainBreak{f, prefix8(e.Prev)})
		}
		last = e.Hash
		hashes = append(hashes, prefix8(e.Hash))
		if kind != toCheck {
			findings = append(findings, f)
			return nil
		}
		pub, _ := kr.Key(e.Agent, "")
		sigs.check(f, e.Agent, pub, e, sig)
		return nil
	}
	for i, file := range c.files {
		r.Files = append(r.Files, file)
		if err := l.walk(ctx, file, 0, c.sizes[i], 1, c.stream, false, handle); err != nil {
			sigs.abandon()
			return err
		}
	}
	findings = append(findings, sigs.wait()...)
	findings = append(findings, chainBreaks(breaks, hashes)...)
	if f, ok := c.cutOff(hashes, signed > 0, lastTorn); ok {
		findings = append(findings, f)
	}
	addFindings(r, findings, c.files, signed)
	return nil
}

// chainBreak is an entry of the older chain whose prev is not the entry
// before it.
type chainBreak struct {
	f    Finding
	prev uint64 // the prefix of the hash it names as its predecessor
}

// chainBreaks names each break: its predecessor elsewhere in the chain
// (reordered) or nowhere (removed).
func chainBreaks(breaks []chainBreak, hashes []uint64) []Finding {
	if len(breaks) == 0 {
		return nil
	}
	seen := make(map[uint64]struct{}, len(hashes))
	for _, h := range hashes {
		seen[h] = struct{}{}
	}
	out := make([]Finding, 0, len(breaks))
	for _, b := range breaks {
		f := b.f
		if _, ok := seen[b.prev]; ok {
			f.Status, f.Detail = StatusReordered, "chain break: the entry before it in the chain is elsewhere in the log"
		} else {
			f.Status, f.Detail = StatusRemoved, "chain break: the entry before it in the chain is missing (deleted)"
		}
		out = append(out, f)
	}
	return out
}

// cutOff checks the head hint, which names the last entry appended: if
// the chain no longer holds it, entries were cut off its end.
func (c chainFiles) cutOff(hashes []uint64, sawSigned, lastTorn bool) (Finding, bool) {
	if _, ok := parseHash(c.head); !ok || c.head == genesis.String() || lastTorn {
		return Finding{}, false
	}
	hp := prefix8(c.head)
	for i := len(hashes) - 1; i >= 0; i-- {
		if hashes[i] == hp {
			return Finding{}, false
		}
	}
	f := Finding{Status: StatusRemoved, Detail: "the log ends before the last entry appended (" + c.head[:12] + "…): entries at the end were removed"}
	if n := len(c.files); n > 0 {
		f.File, f.Offset = c.files[n-1], c.sizes[n-1]
	}
	if !sawSigned {
		f.Detail = "the log holds no signed entry, but entries were appended (" + c.head[:12] + "…): they were removed"
	}
	return f, true
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// verifyChunk is how much of a file is parsed at a time by [Log.walk].
// Tests lower it.
var verifyChunk = int64(16 << 20)

// walk parses file from off (a block boundary, at 1-based line, 0 if
// unknown) up to size in chunks of verifyChunk (more if one block is
// bigger), so that memory stays bounded on big logs, and calls fn for each
// block in order. With holdBack, a last block that may still be being
// written (see inProgress) is not passed on.
func (l *Log) walk(ctx context.Context, file string, off, size int64, line int, stream string, holdBack bool, fn func(*Entry) error) error {
	f, err := vault.OpenRead(l.abs(file))
	if err != nil {
		return err
	}
	defer f.Close()
	chunk := verifyChunk
	var buf []byte
	for off < size {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(chunk, size-off)
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := f.ReadAt(buf, off); err != nil {
			return fmt.Errorf("read %s: %w", file, err)
		}
		final := off+n == size
		p := newParser(buf, off, line, stream, file)
		var pending *Entry
		for {
			e, ok := p.next()
			if !ok {
				break
			}
			if pending != nil {
				if err := fn(pending); err != nil {
					return err
				}
			}
			pending = &e
		}
		switch {
		case final:
			if pending != nil && !(holdBack && inProgress(pending, buf, off)) {
				return fn(pending)
			}
			return nil
		case pending == nil:
			// Only blank lines in this chunk.
			off = off + n
			if line > 0 {
				line = p.line
			}
		case pending.Offset == off:
			chunk *= 2 // one block fills the chunk
		default:
			// The last block may be cut by the chunk's end: parse it again
			// at the start of the next chunk.
			off, line = pending.Offset, pending.Line
		}
	}
	return nil
}
