package livelog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// fileIter reads the blocks of one log file from a block boundary, in
// chunks, so that memory stays bounded however big the file is.
type fileIter struct {
	f        *os.File
	rel      string
	stream   string
	off      int64 // where the next chunk starts
	size     int64
	line     int // 1-based line at off, 0 if unknown
	chunk    int64
	holdBack bool // keep back a last block that may still be being written
	pending  []Entry
	done     bool
	spare    []byte // a chunk's buffer, free for the next read
	noBody   bool   // parse without bodies (counting only)
	// ahead is the parse of the next chunk under way on another
	// goroutine, nil if none.
	ahead chan chunkParse
}

// entryGuess is about the bytes of one entry in the file, to size the
// slice a chunk's blocks are parsed into (growing it cost a tenth of a
// no-cursor read).
const entryGuess = 256

func (l *Log) openIter(rel, stream string, off int64, holdBack bool) (*fileIter, error) {
	f, err := vault.OpenRead(l.abs(rel))
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() < off {
		f.Close()
		return nil, fmt.Errorf("%s is shorter than the position read: %w", rel, ErrCorrupt)
	}
	line := 0
	if off == 0 {
		line = 1
	}
	return &fileIter{f: f, rel: rel, stream: stream, off: off, size: st.Size(), line: line, chunk: min(verifyChunk, iterChunk), holdBack: holdBack}, nil
}

// iterChunk is how much of a file a [fileIter] reads and parses at a time
// (more only while a single block is bigger). A merge holds one chunk and
// its parsed blocks per file, so this bounds a reader's memory whatever
// the log's size: a few MB for the 4 feeds of a million-entry log. (A
// 16 MiB chunk, as verification reads one file at a time, made an agent
// without a cursor need over 200 MB on 200,000 entries.)
const iterChunk = 256 << 10

func (it *fileIter) close() {
	if it.ahead != nil {
		<-it.ahead // the parse under way reads f: let it end first
		it.ahead = nil
	}
	if it.f != nil {
		it.f.Close()
		it.f = nil
	}
}

// next returns the next block, or false at the end.
func (it *fileIter) next() (Entry, bool, error) {
	e, err := it.nextRef()
	if e == nil {
		return Entry{}, false, err
	}
	return *e, true, nil
}

// nextRef is next without a copy: the block stays where the chunk's
// parse put it (the iterator never writes to it again), or nil at the
// end.
func (it *fileIter) nextRef() (*Entry, error) {
	for len(it.pending) == 0 {
		if it.done || it.off >= it.size {
			it.done = true
			return nil, nil
		}
		var c chunkParse
		if it.ahead != nil {
			c = <-it.ahead
			it.ahead = nil
		} else {
			c = it.state().fill(it.f)
		}
		if c.err != nil {
			return nil, c.err
		}
		it.apply(c)
		if !it.done && it.size-it.off > iterChunk {
			// More than a chunk is left: parse the next one on another
			// core while this one is merged and shown (a reader without
			// a cursor reads the whole log; two cores halve its wait).
			it.ahead = make(chan chunkParse, 1)
			go func(st chunkParse, f *os.File, out chan<- chunkParse) { out <- st.fill(f) }(it.state(), it.f, it.ahead)
		}
	}
	e := &it.pending[0]
	it.pending = it.pending[1:]
	return e, nil
}

// chunkParse is one chunk's parse: where it starts (off, line, chunk
// size; the buffer to read into) and, once filled, what it found and
// where the next one starts. It holds no reference to the iterator, so a
// chunk can be parsed on another goroutine while the iterator's blocks
// are used.
type chunkParse struct {
	rel, stream      string
	off, size, chunk int64
	line             int
	holdBack, noBody bool
	buf              []byte
	pending          []Entry
	done             bool
	err              error
}

// state is the start of the iterator's next chunk. The buffer is the
// iterator's spare one: blocks hold copies of a chunk's bytes, never the
// bytes themselves, so the buffer a finished parse read into is free.
func (it *fileIter) state() chunkParse {
	buf := it.spare
	it.spare = nil
	return chunkParse{rel: it.rel, stream: it.stream, off: it.off, size: it.size, chunk: it.chunk, line: it.line, holdBack: it.holdBack, noBody: it.noBody, buf: buf}
}

// apply takes the result of a chunk's parse.
func (it *fileIter) apply(c chunkParse) {
	it.pending, it.done = c.pending, c.done
	it.off, it.line, it.chunk = c.off, c.line, c.chunk
	it.spare = c.buf
}

// fill reads and parses the chunk c starts at from f, as many times as a
// chunk holding less than one whole block takes.
func (c chunkParse) fill(f *os.File) chunkParse {
	for {
		n := min(c.chunk, c.size-c.off)
		if int64(cap(c.buf)) < n {
			c.buf = make([]byte, n)
		}
		buf := c.buf[:n]
		if _, err := f.ReadAt(buf, c.off); err != nil && !errors.Is(err, io.EOF) {
			c.err = fmt.Errorf("read %s: %w", c.rel, err)
			return c
		}
		final := c.off+n == c.size
		p := newParser(buf, c.off, c.line, c.stream, c.rel)
		p.noBody = c.noBody
		got := make([]Entry, 0, n/entryGuess+1)
		for {
			e, ok := p.next()
			if !ok {
				break
			}
			got = append(got, e)
		}
		if final {
			if k := len(got); k > 0 && c.holdBack && inProgress(&got[k-1], buf, c.off) {
				got = got[:k-1]
			}
			c.pending, c.done = got, true
			c.off = c.size
			return c
		}
		switch {
		case len(got) == 0:
			c.off += n
			if c.line > 0 {
				c.line = p.line
			}
			continue
		case len(got) == 1:
			c.chunk *= 2 // one block fills the chunk
			continue
		}
		last := got[len(got)-1]
		c.pending = got[:len(got)-1]
		c.off, c.line = last.Offset, last.Line
		c.chunk = min(c.chunk*2, verifyChunk, iterChunk)
		return c
	}
}

// source is one file taking part in a merge: its next block (head) and
// what it has passed.
type source struct {
	lf      logFile
	it      *fileIter // nil for an in-memory source
	mem     []Entry
	head    *Entry
	writer  string // the writer of its signed entries (or of its name)
	lastSeq int64
	lastT   Entry // the last block passed with a time
	prevT   Entry // lastT before the last pass
	passed  bool
	// skip drops blocks before they reach the merge (already delivered).
	skip func(*Entry) bool
	// end is the offset after the last block taken from this source.
	end int64
	// onErr, when set, takes a read error: the source ends there instead
	// of failing the merge (see [Log.UnreadEnd]).
	onErr func(error)
}

func (s *source) advance() error {
	for {
		var e *Entry
		if s.it != nil {
			var err error
			e, err = s.it.nextRef()
			if err != nil && s.onErr != nil {
				s.onErr(err)
				s.head = nil
				return nil
			}
			if err != nil {
				return err
			}
		} else if len(s.mem) > 0 {
			e, s.mem = &s.mem[0], s.mem[1:]
		}
		if e == nil {
			s.head = nil
			return nil
		}
		if s.writer == "" && e.Signed && e.feed {
			s.writer = e.Writer
		}
		if s.skip != nil && s.skip(e) {
			s.pass(e)
			continue
		}
		s.head = e
		return nil
	}
}

func (s *source) pass(e *Entry) {
	if e.Signed && e.feed && e.Writer == s.writer && e.Seq > s.lastSeq {
		s.lastSeq = e.Seq
	}
	s.prevT = s.lastT
	if !e.Time.IsZero() {
		s.lastT = *e
	}
	s.end, s.passed = e.End, true
}

// covers reports whether s holds nothing more of writer at or below seq:
// it is exhausted, or has passed seq, or its next entry is beyond it.
func (s *source) covers(writer string, seq int64) bool {
	if s.head == nil || s.writer != writer {
		return true
	}
	if s.lastSeq >= seq {
		return true
	}
	return s.head.Signed && s.head.feed && s.head.Writer == writer && s.head.Seq > seq
}

// key is the order among entries that are free to go next: time, then
// writer, then hash. Text without a time of its own (a person's
// paragraph) goes with the block before it in its file.
func (s *source) key() (int64, string, string) {
	e := s.head
	t := e.Time
	if t.IsZero() {
		t = s.lastT.Time
	}
	if t.IsZero() && s.lf.month != "" {
		// Text at the top of a month's file goes at the start of that month.
		t, _ = time.Parse("2006-01", s.lf.month)
	}
	w := e.Writer
	if w == "" {
		w = s.writer
	}
	h := e.Hash
	if h == "" {
		h = fmt.Sprintf("~%s:%016d", s.lf.rel, e.Offset)
	}
	return t.Unix(), w, h
}

func less(a, b *source) bool {
	at, aw, ah := a.key()
	bt, bw, bh := b.key()
	if at != bt {
		return at < bt
	}
	if aw != bw {
		return aw < bw
	}
	return ah < bh
}

// merge passes the blocks of srcs to fn in the log's one order: causal
// first (an entry after the entry before it in its feed and after every
// entry it cites), then time, writer and hash. Every machine holding the
// same files gets the same order. A cited entry that is not here does not
// hold anything back. Identical copies of an entry (a sync tool's
// conflict copy) are passed once.
func merge(ctx context.Context, srcs []*source, fn func(e *Entry, s *source) error) error {
	byWriter := map[string][]*source{}
	for _, s := range srcs {
		if err := s.advance(); err != nil {
			return err
		}
	}
	for _, s := range srcs {
		byWriter[s.writer] = append(byWriter[s.writer], s)
	}
	var seenHash map[string]bool // for writers with more than one file
	multi := map[string]bool{}
	for w, ss := range byWriter {
		if w != "" && len(ss) > 1 {
			multi[w] = true
			seenHash = map[string]bool{}
		}
	}
	ready := func(s *source) bool {
		e := s.head
		if !e.Signed || !e.feed {
			return true
		}
		for _, o := range byWriter[e.Writer] {
			if o != s && !o.covers(e.Writer, e.Seq-1) {
				return false
			}
		}
		for _, c := range e.Cites {
			for _, o := range byWriter[c.Writer] {
				if o != s && !o.covers(c.Writer, c.Seq) {
					return false
				}
			}
		}
		return true
	}
	n := 0
	for {
		if n++; n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var best, any *source
		for _, s := range srcs {
			if s.head == nil {
				continue
			}
			if any == nil || less(s, any) {
				any = s
			}
			if ready(s) && (best == nil || less(s, best)) {
				best = s
			}
		}
		if any == nil {
			return nil
		}
		if best == nil {
			best = any // a cycle of cites (tampering): break it the same way everywhere
		}
		e := best.head
		best.pass(e)
		dup := false
		if seenHash != nil && e.Signed && multi[e.Writer] {
			dup = seenHash[e.Hash]
			seenHash[e.Hash] = true
		}
		if !dup {
			if err := fn(e, best); err != nil {
				return err
			}
		}
		if err := best.advance(); err != nil {
			return err
		}
	}
}

// countOnly makes srcs parse what they have not parsed yet without
// bodies: what follows is only counted.
func countOnly(srcs []*source) {
	for _, s := range srcs {
		if s.it != nil {
			s.it.noBody = true
		}
	}
}

func closeSources(srcs []*source) {
	for _, s := range srcs {
		if s.it != nil {
			s.it.close()
		}
	}
}
