package livelog

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// Size limits. A body of exactly MaxBodyBytes is accepted.
const (
	MaxSummaryRunes = 500     // code points, after folding to one line
	MaxBodyBytes    = 1 << 20 // 1 MiB of UTF-8
	MaxLabelRunes   = 64      // channel and kind
)

// Defaults for an entry that names no channel or kind.
const (
	DefaultChannel = "general"
	DefaultKind    = "note"
)

// Entry is one block of a log file: a signed agent entry, or text a person
// typed by hand (Signed false). Position fields say where it is on disk.
type Entry struct {
	Time    time.Time `json:"time,omitzero"` // zero for hand-typed text
	Agent   string    `json:"agent,omitempty"`
	Channel string    `json:"channel,omitempty"`
	Kind    string    `json:"kind,omitempty"`
	Summary string    `json:"summary"`
	Body    string    `json:"body,omitempty"`

	// Writer is the feed the entry belongs to, AGENT@DEVICE; Seq its
	// number in that feed (1, 2, ...). Both empty for entries of an older
	// vault's single shared chain and for unsigned text.
	Writer string `json:"writer,omitempty"`
	Seq    int64  `json:"seq,omitempty"`
	// Cites are the heads of the other feeds the writer had on its
	// machine when it appended: the entry comes after each of them.
	Cites []Cite `json:"cites,omitempty"`
	// Gap names entries of the writer's own feed that were missing when it
	// appended ("16-20"): recorded in the signed text, never papered over.
	Gap string `json:"gap,omitempty"`
	// Key is the idempotency key's digest: a second append with the same
	// key returns this entry instead of writing another.
	Key string `json:"key,omitempty"`
	// Quarantine names the security rule the text hit when it was written
	// (prompt injection, role hijack): the entry is kept as evidence but
	// other agents see only a "[QUARANTINED: rule]" line. "" when clean
	// or cleared by a person.
	Quarantine string `json:"quarantine,omitempty"`

	// Prev is the chain hash of the signed entry before this one; Sig the
	// agent's signature; Hash this entry's chain hash (SHA-256 of Sig).
	// All three are unpadded base64url. Empty for unsigned text.
	Prev string `json:"prev,omitempty"`
	Sig  string `json:"sig,omitempty"`
	Hash string `json:"hash,omitempty"`

	// Signed is true when the block carries a signature line. It says
	// nothing about whether the signature is valid: see [Log.Verify].
	Signed bool `json:"signed"`
	// Hand is true for text that does not follow the entry grammar at all
	// (a person's paragraph); its Summary is its first line, Body all of it.
	Hand bool `json:"hand,omitempty"`
	// Torn is true for the partial record a crash left behind.
	Torn bool `json:"torn,omitempty"`

	Segment string `json:"segment"` // vault-relative file
	Line    int    `json:"line"`    // 1-based line of the block's first line
	Offset  int64  `json:"offset"`  // byte offset of the block
	End     int64  `json:"end"`     // byte offset just after the block

	timeText string // the time exactly as written, for the canonical form
	stream   string
	feed     bool   // a feed entry (v2 signature line), not the older chain
	qSigned  string // the q= field as signed (Quarantine may be cleared)
	cleared  bool   // a person cleared the quarantine
	damaged  bool   // a signature line without a header, or a malformed one
	// steppedOver: a torn record that a later append already found and
	// marked with the torn marker line.
	steppedOver bool
}

// Hash is a chain hash: the SHA-256 of an entry's signature.
type Hash [32]byte

// genesis is the Prev of the first entry of a chain.
var genesis Hash

// String returns the hash in unpadded base64url, as the log writes it.
func (h Hash) String() string { return b64.EncodeToString(h[:]) }

var b64 = base64.RawURLEncoding

func hashSig(sig []byte) Hash { return sha256.Sum256(sig) }

func parseHash(s string) (Hash, bool) {
	var h Hash
	if len(s) != 43 {
		return h, false
	}
	n, err := b64.Decode(h[:], []byte(s))
	return h, err == nil && n == 32
}

// Streams name the two chains; they are part of what is signed, so an entry
// cannot be moved from one log to the other.
const (
	streamLive      = "live"
	streamDecisions = "decisions"
)

// Cite is the head of another feed that an entry names: that feed's entry
// Seq, whose chain hash starts with Hash (16 characters).
type Cite struct {
	Writer string `json:"writer"`
	Seq    int64  `json:"seq"`
	Hash   string `json:"hash,omitempty"`
}

// citeHashLen is how much of a cited entry's chain hash a cite carries
// (96 bits).
const citeHashLen = 16

func (c Cite) String() string { return c.Writer + ":" + strconv.FormatInt(c.Seq, 10) + ":" + c.Hash }

func formatCites(cs []Cite) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, ",")
}

func parseCites(s string) ([]Cite, bool) {
	if s == "" {
		return nil, true
	}
	var out []Cite
	for _, part := range strings.Split(s, ",") {
		w, rest, ok1 := strings.Cut(part, ":")
		n, h, ok2 := strings.Cut(rest, ":")
		seq, err := strconv.ParseInt(n, 10, 64)
		if !ok1 || !ok2 || err != nil || seq < 1 || len(h) != citeHashLen || !ValidWriter(w) {
			return nil, false
		}
		out = append(out, Cite{Writer: w, Seq: seq, Hash: h})
	}
	return out, true
}

// Canonical returns the bytes an entry's signature covers. For a feed
// entry: the tag "nexus-feed-v1 " and the log's name (live or decisions),
// then writer, seq, prev, cites, gap, key, quarantine rule, time (as
// written), agent, channel, kind and summary, each after a NUL byte, then
// a NUL and the body. For an entry of an older vault's single chain: see
// the older layout in docs/livelog.md ("nexus-log-v1 ..."). Fields never
// contain NUL and the body is last, so the encoding is unambiguous.
func (e *Entry) Canonical() []byte {
	if e.feed {
		return canonicalFeed(nil, e)
	}
	return canonical(nil, e.stream, e.timeText, e.Agent, e.Channel, e.Kind, e.Summary, e.Prev, e.Body)
}

func canonicalFeed(buf []byte, e *Entry) []byte {
	buf = append(buf, "nexus-feed-v1 "...)
	buf = append(buf, e.stream...)
	for _, f := range [...]string{e.Writer, strconv.FormatInt(e.Seq, 10), e.Prev, formatCites(e.Cites), e.Gap, e.Key, e.qSigned,
		e.timeText, e.Agent, e.Channel, e.Kind, e.Summary} {
		buf = append(buf, 0)
		buf = append(buf, f...)
	}
	buf = append(buf, 0)
	return append(buf, e.Body...)
}

// canonical is the older single chain's encoding: a domain tag naming the
// log ("nexus-log-v1 live" or "nexus-log-v1 decisions"), then time (as
// written), agent, channel, kind, summary and prev, each followed by a NUL
// byte, then the body.
func canonical(buf []byte, stream, ts, agent, channel, kind, summary, prev, body string) []byte {
	buf = append(buf, "nexus-log-v1 "...)
	buf = append(buf, stream...)
	for _, f := range [...]string{ts, agent, channel, kind, summary, prev} {
		buf = append(buf, 0)
		buf = append(buf, f...)
	}
	buf = append(buf, 0)
	return append(buf, body...)
}

// sign fills Prev, Sig and Hash.
func (e *Entry) sign(s *identity.Signer, prev Hash) {
	e.Prev = prev.String()
	e.qSigned = e.Quarantine
	sig := s.Sign(e.Canonical())
	e.Sig = b64.EncodeToString(sig)
	e.Hash = hashSig(sig).String()
	e.Signed = true
}

// record renders a signed entry as it is appended: header line, escaped
// body lines, signature line, blank line.
func (e *Entry) record() []byte {
	var b strings.Builder
	b.Grow(len(e.Body) + len(e.Summary) + 256)
	b.WriteString(headerLine(e.timeText, e.Agent, e.Channel, e.Kind, e.Summary))
	b.WriteByte('\n')
	if e.Body != "" {
		for _, line := range strings.Split(e.Body, "\n") {
			b.WriteString(escapeLine(line))
			b.WriteByte('\n')
		}
	}
	b.WriteString(e.sigLine() + "\n\n")
	return []byte(b.String())
}

// sigLine renders the signature line.
func (e *Entry) sigLine() string {
	if !e.feed {
		return sigPrefix + "prev=" + e.Prev + " sig=" + e.Sig + sigSuffix
	}
	var b strings.Builder
	b.WriteString(sigPrefix + "w=" + e.Writer + " seq=" + strconv.FormatInt(e.Seq, 10) + " prev=" + e.Prev)
	if len(e.Cites) > 0 {
		b.WriteString(" cites=" + formatCites(e.Cites))
	}
	if e.Gap != "" {
		b.WriteString(" gap=" + e.Gap)
	}
	if e.Key != "" {
		b.WriteString(" k=" + e.Key)
	}
	if e.qSigned != "" {
		b.WriteString(" q=" + e.qSigned)
	}
	b.WriteString(" sig=" + e.Sig + sigSuffix)
	return b.String()
}

// ValidWriter reports whether w is AGENT@DEVICE with a valid agent and
// device name.
func ValidWriter(w string) bool {
	a, d, ok := strings.Cut(w, "@")
	return ok && identity.ValidName(a) == nil && vault.CheckDeviceName(d) == nil
}

// WriterAgent returns the agent part of a writer ("lyra" of "lyra@vps").
func WriterAgent(w string) string { a, _, _ := strings.Cut(w, "@"); return a }

const (
	headerPrefix = "### "
	nexusComment = "<!-- nexus"
	sigPrefix    = "<!-- nexus "
	sigSuffix    = " -->"
	tornMarker   = "<!-- nexus torn: the record above was cut short by a crash -->"
	timeLayout   = "2006-01-02T15:04:05Z"
)

// TornMarker is the line an append writes, on a line of its own after a
// blank one, below a record a crash cut short: verification then counts
// that record as stepped over, not as a problem. A repair that removes a
// torn tail's padding writes it too (doctor's fix for a NUL-padded tail).
const TornMarker = tornMarker

func headerLine(ts, agent, channel, kind, summary string) string {
	s := headerPrefix + ts + " " + agent + " [" + channel + "/" + kind + "]"
	if summary != "" {
		s += " " + summary
	}
	return s
}

// header is a parsed header line.
type header struct {
	ts, agent, channel, kind, summary string
	t                                 time.Time
}

// parseHeader recognises "### TIME AGENT [CHANNEL/KIND] SUMMARY".
func parseHeader(line string) (header, bool) {
	var h header
	rest, ok := strings.CutPrefix(line, headerPrefix)
	if !ok {
		return h, false
	}
	if h.ts, rest, ok = strings.Cut(rest, " "); !ok {
		return h, false
	}
	t, err := time.Parse(time.RFC3339, h.ts)
	if err != nil {
		return h, false
	}
	h.t = t.UTC()
	if h.agent, rest, ok = strings.Cut(rest, " ["); !ok || identity.ValidName(h.agent) != nil {
		return h, false
	}
	var labels string
	if labels, rest, ok = strings.Cut(rest, "]"); !ok {
		return h, false
	}
	if h.channel, h.kind, ok = strings.Cut(labels, "/"); !ok || checkLabel(h.channel) != nil || checkLabel(h.kind) != nil {
		return h, false
	}
	switch {
	case rest == "":
	case rest[0] == ' ':
		h.summary = rest[1:]
	default:
		return h, false
	}
	return h, true
}

// Reserved body lines are those the parser would take for a header or a
// Nexus comment. They are written with one more leading backslash, which
// markdown renders as nothing ("\###" shows as "###"), and read back
// without it.
func reserved(line string) bool {
	return strings.HasPrefix(line, nexusComment) || (strings.HasPrefix(line, headerPrefix) && isHeader(line))
}

func isHeader(line string) bool { _, ok := parseHeader(line); return ok }

func escapeLine(line string) string {
	if reserved(strings.TrimLeft(line, `\`)) {
		return `\` + line
	}
	return line
}

func unescapeLine(line string) string {
	if strings.HasPrefix(line, `\`) && reserved(strings.TrimLeft(line, `\`)) {
		return line[1:]
	}
	return line
}

// checkLabel validates a channel or kind: 1-64 letters (any script),
// digits, '-', '_' or '.'.
func checkLabel(s string) error {
	if s == "" || utf8.RuneCountInString(s) > MaxLabelRunes {
		return fmt.Errorf("%q must be 1-%d characters: %w", s, MaxLabelRunes, vault.ErrInvalid)
	}
	for _, r := range s {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("%q: only letters, digits, '-', '_' and '.' are allowed: %w", s, vault.ErrInvalid)
		}
	}
	return nil
}

func checkField(field, s string, maxBytes int) error {
	if err := vault.CheckText(field, s, 0); err != nil {
		return err
	}
	if maxBytes > 0 && len(s) > maxBytes {
		return fmt.Errorf("%s is %d bytes, more than the %d allowed: %w", field, len(s), maxBytes, ErrTooLarge)
	}
	// Invisible and bidi-control characters are the security scan's
	// (quarantineCheck): refused by rule invisible_unicode, like every
	// other place text reaches a prompt.
	return nil
}

// foldLine makes s one line: every run of whitespace that holds a line
// break or a tab becomes one space, and the ends are trimmed. folded says
// whether anything but trimming changed.
func foldLine(s string) (out string, folded bool) {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n\t\v\f\u0085\u2028\u2029") {
		return s, false
	}
	return strings.Join(strings.Fields(s), " "), true
}

// normalizeBody turns CRLF and lone CR into LF, drops trailing white space,
// and closes a code fence the body left open (so it cannot swallow the
// entries after it when Obsidian renders the file).
func normalizeBody(s string) (string, bool) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.TrimRight(s, " \t\n")
	if s == "" {
		return "", false
	}
	if fence := openFence(s); fence != "" {
		return s + "\n" + fence, true
	}
	return s, false
}

// openFence returns the fence ("```" or "~~~" run) of a code block left open
// at the end of s, or "".
func openFence(s string) string {
	open := ""
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 {
			continue
		}
		for _, c := range []byte{'`', '~'} {
			n := 0
			for n < len(t) && t[n] == c {
				n++
			}
			if n < 3 {
				continue
			}
			switch {
			case open == "":
				open = t[:n]
			case open[0] == c && n >= len(open) && strings.TrimSpace(t[n:]) == "":
				open = ""
			}
		}
	}
	return open
}

// prepare validates and normalises an entry about to be appended, and
// reports what it changed.
func prepare(e *Entry) (notes []string, err error) {
	if e.Channel == "" {
		e.Channel = DefaultChannel
	}
	if e.Kind == "" {
		e.Kind = DefaultKind
	}
	// Labels are compared by filters: one form for "배포" typed either way.
	e.Channel, e.Kind = norm.NFC.String(e.Channel), norm.NFC.String(e.Kind)
	if err := checkLabel(e.Channel); err != nil {
		return nil, fmt.Errorf("channel %w", err)
	}
	if err := checkLabel(e.Kind); err != nil {
		return nil, fmt.Errorf("kind %w", err)
	}
	if err := checkField("summary", e.Summary, 0); err != nil {
		return nil, err
	}
	var folded bool
	e.Summary, folded = foldLine(e.Summary)
	if n := utf8.RuneCountInString(e.Summary); n > MaxSummaryRunes {
		return nil, fmt.Errorf("summary is %d characters, more than the %d allowed (put details in the body): %w", n, MaxSummaryRunes, ErrTooLarge)
	}
	if folded {
		notes = append(notes, "summary folded to one line")
	}
	if e.Body != "" {
		if strings.TrimSpace(e.Body) == "" {
			e.Body = ""
		} else {
			if err := checkField("body", e.Body, MaxBodyBytes); err != nil {
				return nil, err
			}
			var closed bool
			e.Body, closed = normalizeBody(e.Body)
			if closed {
				notes = append(notes, "unclosed code fence in body closed")
			}
		}
	}
	return notes, nil
}
