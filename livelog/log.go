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
	StateDir   = vault.StateDir + "/livelog"
	headFile   = StateDir + "/head.json"
	cursorsDir = StateDir + "/cursors"
	lockName   = "livelog"
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
	opts Options

	mu      sync.Mutex                  // protects signers
	signers map[string]*identity.Signer // loaded private keys, by agent
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
	return &Log{v: v, opts: opts, signers: map[string]*identity.Signer{}}, nil
}

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

// segments lists the existing segments, oldest first.
func (l *Log) segments() ([]string, error) {
	des, err := os.ReadDir(l.v.MustPath(vault.LiveLogDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list log segments: %w", err)
	}
	var segs []string
	for _, de := range des {
		n := de.Name()
		if de.Type().IsRegular() && len(n) == len("2006-01.md") && strings.HasSuffix(n, ".md") {
			if _, err := time.Parse("2006-01", strings.TrimSuffix(n, ".md")); err == nil {
				segs = append(segs, vault.LiveLogDir+"/"+n)
			}
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
	if p.Segment == "" {
		return false
	}
	f, err := os.Open(l.v.MustPath(p.Segment))
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() < p.Offset {
		return false
	}
	a, err := anchorAt(f, p.Offset)
	return err == nil && a == p.Anchor
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
func (l *Log) writeHead(p pos) error {
	path := l.v.MustPath(headFile)
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
	if err := readJSON(l.v.MustPath(headFile), &h); err == nil && l.valid(h) {
		t.head = h
	} else {
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
			data, err := os.ReadFile(l.v.MustPath(segs[i]))
			if err != nil {
				return t, fmt.Errorf("read %s: %w", segs[i], err)
			}
			if bytes.Contains(data, []byte(sigPrefix+"prev=")) {
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
		}
		f, err := os.Open(l.v.MustPath(seg))
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
	var r AppendResult
	if err := identity.ValidName(agent); err != nil {
		return r, err
	}
	notes, err := prepare(&e)
	if err != nil {
		return r, err
	}
	r.Notes = notes
	s, err := l.signer(agent)
	if err != nil {
		return r, err
	}
	e.Agent, e.stream, e.Hand, e.Torn = agent, streamLive, false, false

	unlock, err := l.v.Lock(lockName)
	if err != nil {
		return r, err
	}
	locked := true
	defer func() {
		if locked {
			unlock()
		}
	}()
	segs, err := l.segments()
	if err != nil {
		return r, err
	}
	t, err := l.findTail(segs)
	if err != nil {
		return r, err
	}
	now := l.opts.Now().UTC().Truncate(time.Second)
	seg := SegmentName(now)
	if len(segs) > 0 && segs[len(segs)-1] > seg {
		seg = segs[len(segs)-1] // the clock went back a month: never append to an old segment
	}
	e.Time, e.timeText = now, now.Format(timeLayout)
	prev, ok := parseHash(t.head.Head)
	if !ok {
		prev = genesis
	}
	e.sign(s, prev)

	var prefix string
	if seg == t.last {
		switch {
		case t.torn:
			prefix = "\n" + tornMarker + "\n\n"
			r.SteppedOverTornTail = true
			l.opts.Logger.Warn("live log: torn tail stepped over", "segment", seg)
		case t.endsNL == 0:
			prefix = "\n\n"
		case t.endsNL == 1:
			prefix = "\n"
		}
	}
	rec := append([]byte(prefix), e.record()...)

	path := l.v.MustPath(seg)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		return r, fmt.Errorf("open %s: %w", seg, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return r, fmt.Errorf("stat %s: %w", seg, err)
	}
	created := st.Size() == 0
	// One write per record: O_APPEND puts it at the end as a whole.
	if _, err := f.Write(rec); err != nil {
		return r, fmt.Errorf("append to %s: %w", seg, err)
	}
	e.Segment = seg
	e.Offset = st.Size() + int64(len(prefix))
	e.End = st.Size() + int64(len(rec))
	e.Line = 0
	if err := l.writeHead(pos{Segment: seg, Offset: e.End, Head: e.Hash, Anchor: anchorOf(rec[max(0, len(rec)-anchorLen):])}); err != nil {
		l.opts.Logger.Warn("live log: head hint not written", "err", err)
	}
	unlock()
	locked = false
	// fsync outside the lock: it flushes every record written so far, so
	// concurrent appenders share the cost (group commit); each still
	// returns only once its own record is durable.
	if err := f.Sync(); err != nil {
		return r, fmt.Errorf("sync %s: %w", seg, err)
	}
	if created {
		if err := vault.SyncDir(filepath.Dir(path)); err != nil {
			return r, err
		}
	}
	r.Entry = e
	return r, nil
}

func jsonIndent(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	return append(data, '\n'), nil
}
