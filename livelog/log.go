package livelog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// Vault-relative locations of the log's own state.
const (
	StateDir = vault.StateDir + "/livelog"
	headFile = StateDir + "/head.json"
	// decisionsHeadFile names the last decision recorded, so that verify
	// can tell when decisions were cut off the end of log/decisions.md.
	decisionsHeadFile = StateDir + "/decisions-head.json"
	cursorsDir        = StateDir + "/cursors"
	lockName          = "livelog"
)

// Options configure a [Log]. The zero value is usable.
type Options struct {
	// Now is the clock entries are stamped with (default time.Now).
	Now func() time.Time
	// Logger receives warnings such as a torn tail found and stepped over
	// (default: discard).
	Logger *slog.Logger
	// PollInterval is how often [Log.Follow] looks for new entries
	// (default 250ms).
	PollInterval time.Duration
}

// Log is the live-context log of a vault (and its decision log). It is safe
// for concurrent use by many goroutines; many processes may open the same
// vault's log at once.
type Log struct {
	v    *vault.Vault
	root string // v.Root()
	opts Options

	mu      sync.Mutex                  // protects signers
	signers map[string]*identity.Signer // loaded private keys, by agent

	countMu sync.Mutex              // protects counts
	counts  map[string]*unreadCount // UnreadCount's running counts, by agent
}

// Open returns the live log of v. It creates nothing until the first
// append.
func Open(v *vault.Vault, opts Options) (*Log, error) {
	if v == nil {
		return nil, errors.New("livelog: nil vault")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 250 * time.Millisecond
	}
	// The log's folders must not lead out of the vault (a symlink).
	for _, d := range []string{vault.LiveLogDir, StateDir, vault.DecisionsLog} {
		if _, err := v.Path(d); err != nil {
			return nil, fmt.Errorf("open live log: %w", err)
		}
	}
	return &Log{v: v, root: v.Root(), opts: opts, signers: map[string]*identity.Signer{}, counts: map[string]*unreadCount{}}, nil
}

// Vault returns the vault the log belongs to.
func (l *Log) Vault() *vault.Vault { return l.v }

func (l *Log) signer(agent string) (*identity.Signer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.signers[agent]; ok {
		return s, nil
	}
	s, err := identity.LoadSigner(l.v, agent)
	if err != nil {
		return nil, err
	}
	l.signers[agent] = s
	return s, nil
}

// SegmentName returns the vault-relative segment holding entries of t's
// month: log/live/YYYY-MM.md.
func SegmentName(t time.Time) string {
	return vault.LiveLogDir + "/" + t.UTC().Format("2006-01") + ".md"
}

// isSegment reports whether rel names a segment (log/live/YYYY-MM.md). Paths
// read from state files and given by callers are checked with it before use.
func isSegment(rel string) bool {
	name, ok := strings.CutPrefix(rel, vault.LiveLogDir+"/")
	if !ok || len(name) != len("2006-01.md") || !strings.HasSuffix(name, ".md") {
		return false
	}
	_, err := time.Parse("2006-01", strings.TrimSuffix(name, ".md"))
	return err == nil
}

// segments lists the existing segments, oldest first.
func (l *Log) segments() ([]string, error) {
	des, err := os.ReadDir(l.abs(vault.LiveLogDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list log segments: %w", err)
	}
	var segs []string
	for _, de := range des {
		if rel := vault.LiveLogDir + "/" + de.Name(); de.Type().IsRegular() && isSegment(rel) {
			segs = append(segs, rel)
		}
	}
	sort.Strings(segs)
	return segs, nil
}

// pos is a position in the chain: the end of a block in a segment, and the
// chain hash of the last signed entry at or before it.
type pos struct {
	Segment string `json:"segment"`
	Offset  int64  `json:"offset"`
	Head    string `json:"head"`
	// Anchor is the hex SHA-256 of the (up to) 64 bytes before Offset: a
	// cheap check that the file was not changed before the position.
	Anchor string `json:"anchor"`
}

const anchorLen = 64

// anchorAt hashes the bytes before off in f.
func anchorAt(f *os.File, off int64) (string, error) {
	n := min(off, anchorLen)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off-n); err != nil {
		return "", err
	}
	return anchorOf(buf), nil
}

func anchorOf(b []byte) string {
	h := hashSig(b)
	return fmt.Sprintf("%x", h[:16])
}

// valid reports whether p still describes the file: it exists, is at
// least p.Offset long, and has the same bytes just before p.Offset.
func (l *Log) valid(p pos) bool {
	_, ok := l.validSize(p)
	return ok
}

// validSize is [Log.valid] that also returns the segment's size.
func (l *Log) validSize(p pos) (int64, bool) {
	if !isSegment(p.Segment) || p.Offset < 0 {
		return 0, false
	}
	f, err := os.Open(l.abs(p.Segment))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() < p.Offset {
		return 0, false
	}
	a, err := anchorAt(f, p.Offset)
	return st.Size(), err == nil && a == p.Anchor
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(bytes.TrimRight(data, " \n\x00"), v)
}

// writeHead records the chain head. It is a hint, checked before use
// ([Log.valid]), so it is written in place without fsync: a torn or stale
// head file only costs a scan. Fixed-size padding keeps old bytes from
// showing through without truncating.
func (l *Log) writeHead(p pos) error { return l.writeHint(headFile, p) }

// writeHint writes a head hint file (see [Log.writeHead]).
func (l *Log) writeHint(rel string, p pos) error {
	path := l.abs(rel)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		return fmt.Errorf("write log head: %w", err)
	}
	defer f.Close()
	data, _ := json.Marshal(p)
	if len(data) < 512 {
		data = append(data, bytes.Repeat([]byte{' '}, 511-len(data))...)
		data = append(data, '\n')
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return fmt.Errorf("write log head: %w", err)
	}
	return nil
}

// tail is what an appender must know about the end of the log.
type tail struct {
	head    pos    // last signed entry (its End and hash)
	last    string // newest segment with content, "" if none
	torn    bool   // the last block of last is torn
	endsNL  int    // how many "\n" end last (0, 1 or 2+)
	scanned bool   // the head file was not trusted; the log was scanned
}

// findTail locates the chain head, trusting the head file when it checks out
// and catching up on anything after it (records whose head update a crash
// lost, hand-typed text, a torn tail). Called with the lock held.
func (l *Log) findTail(segs []string) (tail, error) {
	var t tail
	var h pos
	headSize := int64(-1)
	if err := readJSON(l.abs(headFile), &h); err == nil {
		if size, ok := l.validSize(h); ok {
			t.head, headSize = h, size
		}
	}
	if headSize < 0 {
		t.scanned = true
	}
	start := 0
	if !t.scanned {
		start = sort.SearchStrings(segs, t.head.Segment)
		if start == len(segs) || segs[start] != t.head.Segment {
			t.scanned = true
			t.head = pos{}
			start = 0
		}
	}
	if t.scanned {
		// Find the newest segment holding a signed entry by scanning back
		// from the end; a month of hand text alone has none.
		start = 0
		for i := len(segs) - 1; i >= 0; i-- {
			data, err := os.ReadFile(l.abs(segs[i]))
			if err != nil {
				return t, fmt.Errorf("read %s: %w", segs[i], err)
			}
			if hasSigned(data, segs[i]) {
				start = i
				break
			}
		}
		t.head = pos{Head: genesis.String()}
	}
	for i := start; i < len(segs); i++ {
		seg := segs[i]
		off := int64(0)
		if seg == t.head.Segment {
			off = t.head.Offset
			if headSize == off && i == len(segs)-1 {
				// The common case: nothing after the head. Records end
				// with a blank line.
				t.last, t.torn, t.endsNL = seg, false, 2
				continue
			}
		}
		f, err := os.Open(l.abs(seg))
		if err != nil {
			return t, fmt.Errorf("open %s: %w", seg, err)
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return t, err
		}
		size := st.Size()
		if size == 0 {
			f.Close()
			continue
		}
		data := make([]byte, size-off)
		_, err = f.ReadAt(data, off)
		f.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			return t, fmt.Errorf("read %s: %w", seg, err)
		}
		t.last, t.torn = seg, false
		t.endsNL = 0
		for j := len(data) - 1; j >= 0 && data[j] == '\n' && t.endsNL < 2; j-- {
			t.endsNL++
		}
		if len(data) == 0 {
			// Nothing after the head: the head's own record ends the file.
			t.endsNL = 2
		}
		p := newParser(data, off, 0, streamLive, seg)
		for {
			e, ok := p.next()
			if !ok {
				break
			}
			if e.Signed && !e.Torn {
				t.head = pos{Segment: seg, Offset: e.End, Head: e.Hash}
			}
			t.torn = e.Torn
		}
	}
	return t, nil
}

// hasSigned reports whether data holds a complete signed record.
func hasSigned(data []byte, seg string) bool {
	if !bytes.Contains(data, []byte(sigPrefix+"prev=")) {
		return false
	}
	p := newParser(data, 0, 0, streamLive, seg)
	for {
		e, ok := p.next()
		if !ok {
			return false
		}
		if e.Signed && !e.Torn {
			return true
		}
	}
}

// AppendResult is what [Log.Append] did besides appending.
type AppendResult struct {
	Entry Entry `json:"entry"`
	// Notes say what was normalised: "summary folded to one line",
	// "unclosed code fence in body closed".
	Notes []string `json:"notes,omitempty"`
	// SteppedOverTornTail is true when the log ended in a record cut short
	// by a crash; a marker line was written after it and the new entry
	// starts on a clean line.
	SteppedOverTornTail bool `json:"stepped_over_torn_tail,omitempty"`
}

// Append signs e as agent and appends it to the current segment. The time
// is taken from the clock once the lock is held (e.Time is ignored), so
// file order is time order. Channel and kind default to "general" and
// "note"; the summary is folded to one line (newlines become spaces, see
// [AppendResult.Notes]); the body is markdown of at most [MaxBodyBytes],
// with CRLF turned into LF. The entry is on disk (fsynced) when Append
// returns.
func (l *Log) Append(agent string, e Entry) (Entry, error) {
	r, err := l.AppendDetailed(agent, e)
	return r.Entry, err
}

// AppendDetailed is [Log.Append] that also reports normalisation and torn
// tail recovery.
func (l *Log) AppendDetailed(agent string, e Entry) (AppendResult, error) {
	rs, err := l.appendAll(agent, []Entry{e})
	if err != nil {
		return AppendResult{}, err
	}
	return rs[0], nil
}

// AppendBatch appends many entries by one agent under one lock, with one
// write per segment and one fsync: for importing and generating logs. Each
// entry is validated like [Log.Append] (nothing is written if one fails)
// and stamped by the clock in turn.
func (l *Log) AppendBatch(agent string, es []Entry) ([]Entry, error) {
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
		notes, err := prepare(&es[i])
		if err != nil {
			if len(es) > 1 {
				err = fmt.Errorf("entry %d: %w", i+1, err)
			}
			return nil, err
		}
		rs[i].Notes = notes
		es[i].Agent, es[i].stream, es[i].Hand, es[i].Torn = agent, streamLive, false, false
	}
	s, err := l.signer(agent)
	if err != nil {
		return nil, err
	}

	unlock, err := l.v.Lock(lockName)
	if err != nil {
		return nil, err
	}
	locked := true
	defer func() {
		if locked {
			unlock()
		}
	}()
	segs, err := l.segments()
	if err != nil {
		return nil, err
	}
	t, err := l.findTail(segs)
	if err != nil {
		return nil, err
	}
	newest := ""
	if len(segs) > 0 {
		newest = segs[len(segs)-1]
	}
	prev, ok := parseHash(t.head.Head)
	if !ok {
		prev = genesis
	}
	// Sign and render, grouping records by segment.
	type write struct {
		seg string
		buf []byte
		idx []int
	}
	var writes []*write
	for i := range es {
		e := &es[i]
		now := l.opts.Now().UTC().Truncate(time.Second)
		seg := SegmentName(now)
		if seg < newest {
			seg = newest // the clock went back a month: never append to an old segment
		}
		newest = seg
		e.Time, e.timeText = now, now.Format(timeLayout)
		e.sign(s, prev)
		prev, _ = parseHash(e.Hash)
		if len(writes) == 0 || writes[len(writes)-1].seg != seg {
			w := &write{seg: seg}
			if seg == t.last {
				switch {
				case t.torn:
					w.buf = append(w.buf, "\n"+tornMarker+"\n\n"...)
					rs[i].SteppedOverTornTail = true
					l.opts.Logger.Warn("live log: torn tail stepped over", "segment", seg)
				case t.endsNL == 0:
					w.buf = append(w.buf, "\n\n"...)
				case t.endsNL == 1:
					w.buf = append(w.buf, '\n')
				}
			}
			writes = append(writes, w)
		}
		w := writes[len(writes)-1]
		e.Offset = int64(len(w.buf)) // relative until written
		w.buf = append(w.buf, e.record()...)
		e.End = int64(len(w.buf))
		e.Segment = seg
		w.idx = append(w.idx, i)
	}
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var created []string
	for _, w := range writes {
		path := l.abs(w.seg)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if errors.Is(err, fs.ErrNotExist) {
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", w.seg, err)
		}
		files = append(files, f)
		st, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("stat %s: %w", w.seg, err)
		}
		if st.Size() == 0 {
			created = append(created, filepath.Dir(path))
		}
		// One write: O_APPEND puts the records at the end as a whole.
		if _, err := f.Write(w.buf); err != nil {
			return nil, fmt.Errorf("append to %s: %w", w.seg, err)
		}
		for _, i := range w.idx {
			es[i].Offset += st.Size()
			es[i].End += st.Size()
		}
		last := &es[w.idx[len(w.idx)-1]]
		end := st.Size() + int64(len(w.buf))
		anchor := anchorOf(w.buf[max(0, len(w.buf)-anchorLen):])
		if err := l.writeHead(pos{Segment: w.seg, Offset: end, Head: last.Hash, Anchor: anchor}); err != nil {
			l.opts.Logger.Warn("live log: head hint not written", "err", err)
		}
	}
	unlock()
	locked = false
	// fsync outside the lock: it flushes every record written so far, so
	// concurrent appenders share the cost (group commit); each still
	// returns only once its own records are durable.
	for _, f := range files {
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("sync %s: %w", f.Name(), err)
		}
	}
	for _, d := range created {
		if err := vault.SyncDir(d); err != nil {
			return nil, err
		}
	}
	for i := range es {
		rs[i].Entry = es[i]
	}
	return rs, nil
}

func jsonIndent(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	return append(data, '\n'), nil
}

// abs turns one of the log's own vault-relative paths (a segment checked
// with isSegment, the decision log, a state file of a valid agent) into an
// absolute path. Unlike [vault.Vault.MustPath] it does not resolve symlinks
// on every call: Open checked the log's folders once, and appends call this
// several times while holding the lock.
func (l *Log) abs(rel string) string {
	return filepath.Join(l.root, filepath.FromSlash(rel))
}
