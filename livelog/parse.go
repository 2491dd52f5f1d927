package livelog

import (
	"bytes"
	"strconv"
	"strings"
)

// parser splits the bytes of a log file into blocks (see [Entry]). It
// starts at a block boundary: the start of a file or the End of a block.
//
// The grammar, line by line (a trailing "\r" is ignored when recognising a
// line):
//
//	header  = "### " TIME " " AGENT " [" CHANNEL "/" KIND "]" [" " SUMMARY]
//	sig     = "<!-- nexus prev=" HASH " sig=" SIGNATURE " -->"
//	torn    = "<!-- nexus torn: ... -->"      (written after a torn tail)
//
// An entry is a header, the body lines after it, and a sig line; a header
// block that reaches the next header, a torn marker or the end of the file
// without a sig line is unsigned. Other text, up to the next header or
// Nexus comment, is a hand-typed block. A block followed by a torn marker,
// or left without a final newline at the end of the file while looking like
// a record, is torn.
type parser struct {
	data    []byte
	base    int64 // file offset of data[0]
	pos     int
	line    int  // 1-based line number of data[pos]
	noLines bool // line numbers are unknown (parsing from the middle)
	// noBody leaves blocks' bodies empty: for counting, which needs the
	// headers and signature lines only (a body is most of an entry).
	noBody  bool
	stream  string
	segment string
}

// newParser parses data, which starts at file offset base and at the given
// 1-based line; line 0 means unknown, and blocks get Line 0.
func newParser(data []byte, base int64, line int, stream, segment string) *parser {
	p := &parser{data: data, base: base, line: line, stream: stream, segment: segment}
	if line < 1 {
		p.line, p.noLines = 1, true
	}
	return p
}

// peek returns the line at pos (without "\n" and a trailing "\r"), the
// position after it, and whether it ended with "\n".
func (p *parser) peek(pos int) (line []byte, next int, nl bool) {
	i := bytes.IndexByte(p.data[pos:], '\n')
	if i < 0 {
		line, next = p.data[pos:], len(p.data)
	} else {
		line, next, nl = p.data[pos:pos+i], pos+i+1, true
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, next, nl
}

func blank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// skippable reports whether line is blank or a torn marker, as
// lineKindOf would say, without parsing a header (block parses it).
func skippable(line []byte) bool {
	switch {
	case len(line) == 0:
		return true
	case line[0] == '#':
		return false // a header, or text: neither is blank
	case line[0] == '<' && bytes.HasPrefix(line, []byte(nexusComment)):
		return bytes.HasPrefix(line, []byte(tornMarker[:len("<!-- nexus torn")]))
	}
	return blank(line)
}

type lineKind int

const (
	kindText lineKind = iota
	kindHeader
	kindSig   // a Nexus comment other than the torn marker
	kindTorn  // the torn marker
	kindBlank // empty or white space
)

// lineKindOf says what one line of a log file is (the header parsed, for
// a header).
func lineKindOf(line []byte) (lineKind, header) {
	switch {
	case len(line) == 0:
		return kindBlank, header{}
	case line[0] == '#' && bytes.HasPrefix(line, []byte(headerPrefix)):
		if h, ok := parseHeader(string(line)); ok {
			return kindHeader, h
		}
	case line[0] == '<' && bytes.HasPrefix(line, []byte(nexusComment)):
		if bytes.HasPrefix(line, []byte(tornMarker[:len("<!-- nexus torn")])) {
			return kindTorn, header{}
		}
		return kindSig, header{}
	}
	if blank(line) {
		return kindBlank, header{}
	}
	return kindText, header{}
}

// sigFields are the fields of a signature line.
type sigFields struct {
	prev, sig string
	feed      bool // the feed form (w= seq= ...), not the older chain's
	writer    string
	seq       int64
	cites     []Cite
	gap, key  string
	q         string
	// sigText is sig as it stands in the line parsed (valid while that
	// line's bytes are), so that the hash needs no copy of it.
	sigText []byte
}

// parseSig reads a signature line: the feed form
//
//	<!-- nexus w=WRITER seq=N prev=H [cites=...] [gap=A-B] [k=K] [q=RULE] sig=S -->
//
// or the older chain's "<!-- nexus prev=P sig=S -->".
func parseSig(line []byte) (sigFields, bool) {
	var f sigFields
	s, ok := strings.CutPrefix(string(line), sigPrefix)
	if !ok {
		return f, false
	}
	if s, ok = strings.CutSuffix(s, sigSuffix); !ok {
		return f, false
	}
	var buf [8]string // room for every field of the feed form
	toks := splitSpaces(buf[:0], s)
	if len(toks) == 2 {
		p, ok1 := strings.CutPrefix(toks[0], "prev=")
		g, ok2 := strings.CutPrefix(toks[1], "sig=")
		if !ok1 || !ok2 {
			return f, false
		}
		f.prev, f.sig = p, g
		f.sigText = sigBytes(line, g)
		return f, true
	}
	if len(toks) < 4 {
		return f, false
	}
	f.feed = true
	var err error
	next := 0
	take := func(name string) (string, bool) {
		if next < len(toks) {
			if v, ok := strings.CutPrefix(toks[next], name+"="); ok {
				next++
				return v, true
			}
		}
		return "", false
	}
	w, ok1 := take("w")
	n, ok2 := take("seq")
	p, ok3 := take("prev")
	if !ok1 || !ok2 || !ok3 || !ValidWriter(w) {
		return f, false
	}
	if f.seq, err = strconv.ParseInt(n, 10, 64); err != nil || f.seq < 1 || strconv.FormatInt(f.seq, 10) != n {
		return f, false
	}
	f.writer, f.prev = w, p
	if c, ok := take("cites"); ok {
		if f.cites, ok = parseCites(c); !ok {
			return f, false
		}
	}
	f.gap, _ = take("gap")
	f.key, _ = take("k")
	f.q, _ = take("q")
	g, ok := take("sig")
	if !ok || next != len(toks) {
		return f, false
	}
	f.sig = g
	f.sigText = sigBytes(line, g)
	return f, true
}

// sigBytes returns the bytes of line that hold sig, its last field.
func sigBytes(line []byte, sig string) []byte {
	end := len(line) - len(sigSuffix)
	return line[end-len(sig) : end]
}

// splitSpaces appends the fields of s between single spaces to toks, as
// strings.Split(s, " ") gives them, without allocating while they fit.
func splitSpaces(toks []string, s string) []string {
	for {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			return append(toks, s)
		}
		toks = append(toks, s[:i])
		s = s[i+1:]
	}
}

// looksLikeRecord reports whether an unterminated first line is the start
// of a record cut short ("###", "### 2026-..."), as opposed to a person's
// text that merely lacks a final newline.
func looksLikeRecord(line []byte) bool {
	if len(line) <= len(headerPrefix) {
		return strings.HasPrefix(headerPrefix, string(line)) && len(line) > 0
	}
	return bytes.HasPrefix(line, []byte(headerPrefix)) && line[4] >= '0' && line[4] <= '9'
}

// next returns the next block, or false at the end of the data.
func (p *parser) next() (Entry, bool) {
	for {
		// Skip blank lines and stray torn markers.
		for p.pos < len(p.data) {
			line, nxt, _ := p.peek(p.pos)
			if !skippable(line) {
				break
			}
			p.pos, p.line = nxt, p.line+1
		}
		if p.pos >= len(p.data) {
			return Entry{}, false
		}
		e, ok := p.block()
		if ok {
			return e, true
		}
	}
}

func (p *parser) block() (Entry, bool) {
	start, startLine := p.pos, p.line
	e := Entry{Segment: p.segment, Line: startLine, Offset: p.base + int64(start), stream: p.stream}
	if p.noLines {
		e.Line = 0
	}
	first, pos, nl := p.peek(start)
	k, h := lineKindOf(first)
	line := p.line + 1
	switch k {
	case kindHeader:
		e.Time, e.timeText, e.Agent, e.Channel, e.Kind, e.Summary = h.t, h.ts, h.agent, h.channel, h.kind, h.summary
	case kindSig:
		// A signature line with no header above it: the header was
		// damaged or deleted.
		e.Hand, e.damaged = true, true
		if sf, ok := parseSig(first); ok {
			e.setSig(sf)
		} else if !nl {
			e.Torn = true
		}
		e.Summary = strings.TrimSpace(string(first))
		e.Body = e.Summary
		p.pos, p.line = pos, line
		p.skipRecordBlank()
		e.End = p.base + int64(p.pos)
		return e, true
	default:
		e.Hand = true
		e.Summary = strings.TrimSpace(string(first))
	}
	if !nl {
		// A lone unterminated line at the end of the file.
		p.pos, p.line = pos, line
		e.End = p.base + int64(pos)
		e.Torn = k == kindHeader || looksLikeRecord(first)
		if e.Hand {
			e.Body = string(first)
		}
		return e, true
	}
	return p.rest(e, start, pos, line, first), true
}

// rest reads the lines of block e after its first (first, which started
// at start), from pos (line number line) up to its signature line, the
// next header, a torn marker, or the end of the data.
func (p *parser) rest(e Entry, start, pos, line int, first []byte) Entry {
	bodyStart := pos
	lastText := pos // end of the last non-blank line consumed
	escaped := false
	for pos < len(p.data) {
		l, nxt, lnl := p.peek(pos)
		lk, _ := lineKindOf(l)
		switch lk {
		case kindHeader:
			return p.finish(e, start, bodyStart, lastText, pos, line, escaped)
		case kindTorn:
			e.Torn, e.steppedOver = true, true
			return p.finish(e, start, bodyStart, lastText, nxt, line+1, escaped)
		case kindSig:
			sf, ok := parseSig(l)
			// A complete signature line counts without its newline: the
			// file's last record may lack it (a sync tool or an editor
			// trimmed it); it is not torn.
			if !ok {
				// A damaged or cut-off signature line stays in the block.
				if lnl {
					e.damaged = true
				} else {
					e.Torn = true
				}
				lastText = nxt
				pos, line = nxt, line+1
				continue
			}
			switch {
			case e.Hand:
				e.damaged = true
				if !p.noBody {
					e.Body = strings.TrimRight(string(p.data[start:pos]), "\r\n")
				}
			case !p.noBody:
				e.Body = p.body(bodyStart, pos, escaped)
			}
			e.setSig(sf)
			p.pos, p.line = nxt, line+1
			p.skipRecordBlank()
			e.End = p.base + int64(p.pos)
			return e
		case kindText:
			if len(l) > 0 && l[0] == '\\' {
				escaped = true
			}
			lastText = nxt
			if !lnl {
				// The file ends inside this block, without a newline.
				e.Torn = !e.Hand || looksLikeRecord(first)
			}
		}
		pos, line = nxt, line+1
	}
	return p.finish(e, start, bodyStart, lastText, pos, line, escaped)
}

func (e *Entry) setSig(sf sigFields) {
	prev, sig := sf.prev, sf.sig
	e.Prev, e.Sig, e.Signed = prev, sig, true
	if sf.feed {
		e.feed, e.Writer, e.Seq, e.Cites, e.Gap, e.Key = true, sf.writer, sf.seq, sf.cites, sf.gap, sf.key
		e.Quarantine, e.qSigned = sf.q, sf.q
	}
	text := sf.sigText
	if text == nil {
		text = []byte(sig)
	}
	e.Hash = sigHash(text)
}

// sigHash is the Hash of an entry whose signature reads sig: the hash of
// the signature's bytes (of sig itself if it is not base64), without
// allocating but for the result.
func sigHash(sig []byte) string {
	var buf [96]byte
	raw := buf[:0]
	if n := b64.DecodedLen(len(sig)); n > len(buf) {
		raw = make([]byte, n)
	}
	var h Hash
	if n, err := b64.Decode(raw[:cap(raw)], sig); err == nil {
		h = hashSig(raw[:n])
	} else {
		h = hashSig(sig)
	}
	var out [44]byte
	b64.Encode(out[:], h[:])
	return string(out[:b64.EncodedLen(len(h))])
}

// skipRecordBlank consumes the one blank line that ends a record.
func (p *parser) skipRecordBlank() {
	if p.pos >= len(p.data) {
		return
	}
	if l, n, nl := p.peek(p.pos); len(l) == 0 && nl {
		p.pos, p.line = n, p.line+1
	}
}

// finish ends an unsigned block whose last non-blank line ends at lastText;
// the parser resumes at pos (line).
func (p *parser) finish(e Entry, start, bodyStart, lastText, pos, line int, escaped bool) Entry {
	e.End = p.base + int64(lastText)
	switch {
	case p.noBody:
	case e.Hand:
		e.Body = strings.TrimRight(string(p.data[start:lastText]), "\r\n")
	default:
		e.Body = p.body(bodyStart, lastText, escaped)
	}
	p.pos, p.line = pos, line
	return e
}

// body returns the body between from and to (to is just after a "\n" or the
// end of the data), without the final newline, unescaped.
func (p *parser) body(from, to int, escaped bool) string {
	if to <= from {
		return ""
	}
	b := p.data[from:to]
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	crlf := bytes.IndexByte(b, '\r') >= 0
	if !escaped && !crlf {
		return string(b)
	}
	// A file whose line ends became CRLF (git autocrlf, a Windows editor)
	// holds the same entry: bodies are signed with LF line ends.
	lines := strings.Split(string(b), "\n")
	if crlf {
		for i, l := range lines {
			lines[i] = strings.TrimSuffix(l, "\r")
		}
	}
	if !escaped {
		return strings.Join(lines, "\n")
	}
	for i, l := range lines {
		lines[i] = unescapeLine(l)
	}
	return strings.Join(lines, "\n")
}
