package index

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/index/canvas"
	"github.com/nexus-memory/nexus/index/markdown"
	"github.com/nexus-memory/nexus/internal/invisible"
	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// snippetRunes is the length of a snippet, in code points.
const snippetRunes = 200

// snippetScanCap bounds how many occurrences of each query term the
// snippet weighs: enough to find the best window, cheap in a huge note.
const snippetScanCap = 200

// snippet returns the hit's text around its best match: the window of
// the section holding the most distinct query terms, placed so the match
// stands near its middle, with each word that holds a query term wrapped
// in ** ** whole (a Korean word with its particles, an English word
// whatever its stem; in Chinese and Japanese, which have no spaces, the
// characters matched). Links show as their text and markup is dropped. A
// hit whose text holds no term (a note that is all frontmatter, or
// matched by a property) shows its properties; a snippet is never empty
// for a note with any text.
//
// To stay cheap on long sections it finds candidate places by substring
// search for each analysed term (a stem is a prefix of its words; a CJK
// bigram is a substring) and runs the analyzer only on the window.
func (ix *Index) snippet(an analysis.Analyzer, terms map[string]bool, h Hit, data []byte) string {
	if data == nil {
		data = ix.readHit(h.Path)
	}
	if data == nil {
		return ""
	}
	whole := sectionBytes(data, h.Line, h.EndLine)
	sec, cutStart, cutEnd := excerpt(whole, terms)
	text := snippetText(sec)
	win, start, end, found := bestWindow(text, terms)
	if !found && len(sec) < len(whole) {
		// The term found in the raw text is not shown there (a link's
		// target, a comment): look through the whole section.
		text, cutStart, cutEnd = snippetText(whole), false, false
		win, start, end, found = bestWindow(text, terms)
	}
	if !found {
		if props := propsText(data); props != "" {
			if w, s, e, ok := bestWindow(props, terms); ok || strings.TrimSpace(text) == "" {
				text, win, start, end = props, w, s, e
			}
		}
	}
	if strings.TrimSpace(win) == "" {
		win, start, end, text = h.Title, 0, len(h.Title), h.Title
	}
	if rule := windowRule(text, start, end); rule != "" {
		return scan.Withheld(rule, "the text of "+h.Path+" at this hit", "a person can read the note itself")
	}
	var b strings.Builder
	if start > 0 || cutStart && text != h.Title {
		b.WriteString("…")
	}
	b.WriteString(highlight(an, terms, win))
	if end < len(text) || cutEnd && text != h.Title {
		b.WriteString("…")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// excerptMin is the length from which a section is narrowed to the
// paragraphs around its best match before it is rendered for a snippet
// (see [excerpt]); shorter ones are rendered whole. A variable for tests.
var excerptMin = 16 << 10

// excerptMargin is how much of the section, in bytes, an excerpt keeps
// on each side of the best match's window (200 code points are at most
// 800 bytes; markup dropped from the excerpt makes it shorter).
const excerptMargin = 2 << 10

// excerpt narrows sec, a long section, to the paragraphs around its best
// match, so that a snippet's work is bounded by the match, not by the
// section: the markup regexes, normalisation and the read-time scan then
// run over a few kilobytes, not over a 200 KB note without headings.
// cutStart and cutEnd say that text was left out before or after it.
//
// The best match is found as [bestWindow] finds it, by substring search
// over the raw text. The excerpt starts and ends at a blank line, never
// inside a multi-line construct that rendering or the scan would see
// otherwise cut: an HTML or %% comment, $$ math, a fenced code block, a
// code span, an armored key block. So its rendering is the section's
// rendering around the match (TestExcerptRendersAsTheWholeSection).
// When no term is found the excerpt is the section's start (the snippet
// shows the section's start); a section with no blank line to cut at
// near the match is returned whole.
func excerpt(sec []byte, terms map[string]bool) (part []byte, cutStart, cutEnd bool) {
	if len(sec) < excerptMin {
		return sec, false, false
	}
	raw := string(sec)
	_, ws, we, n := bestWindowN(raw, terms)
	if n == 0 {
		ws, we = 0, 0
	}
	ivs := multiline(raw)
	a := cutBefore(raw, ws-excerptMargin, ivs)
	b := cutAfter(raw, we+excerptMargin, ivs)
	if a < 0 || b < 0 {
		return sec, false, false
	}
	return sec[a:b], a > 0, b < len(sec)
}

// interval is a byte range [start, end) of a section that a cut must not
// split.
type interval struct{ start, end int }

// cutBefore is the start of the paragraph holding byte at (the byte after
// a blank line, or 0), moved back before any interval it would split; -1
// when the cut would be far (no blank line within 8 KB).
func cutBefore(s string, at int, ivs []interval) int {
	const far = 8 << 10
	at = max(0, min(at, len(s)))
	limit := at - far
	for {
		if at <= 0 {
			return 0
		}
		k := strings.LastIndex(s[:at], "\n\n")
		if k < 0 || k < limit {
			if k < 0 && at < far {
				return 0
			}
			return -1
		}
		at = k + 2
		moved := false
		for _, iv := range ivs {
			if iv.start < at && at < iv.end {
				at, moved = iv.start, true
			}
		}
		if !moved {
			return at
		}
	}
}

// cutAfter is the end of the paragraph holding byte at (after the blank
// line that ends it, or len(s)), moved on past any interval it would
// split; -1 when far (no blank line within 8 KB).
func cutAfter(s string, at int, ivs []interval) int {
	const far = 8 << 10
	at = max(0, min(at, len(s)))
	limit := at + far
	for {
		if at >= len(s) {
			return len(s)
		}
		k := strings.Index(s[at:], "\n\n")
		if k < 0 || at+k > limit {
			if k < 0 && len(s)-at < far {
				return len(s)
			}
			return -1
		}
		at += k + 2
		moved := false
		for _, iv := range ivs {
			if iv.start < at && at < iv.end {
				at, moved = iv.end, true
			}
		}
		if !moved {
			return at
		}
	}
}

// multiline lists the constructs of s that may run over lines, each a
// range a cut must not split: HTML and %% comments and $$ math (paired
// as their regexes pair them, the leftmost open with the next close),
// armored key blocks, fenced code blocks (open to close, or to the end)
// and code spans (paired as [spans] pairs them, outside fences). One
// pass of byte searches over s; no regex.
func multiline(s string) []interval {
	var ivs []interval
	pairs := func(open, close string) {
		for off := 0; ; {
			i := strings.Index(s[off:], open)
			if i < 0 {
				return
			}
			i += off
			j := strings.Index(s[i+len(open):], close)
			if j < 0 {
				return
			}
			j += i + len(open) + len(close)
			ivs = append(ivs, interval{i, j})
			off = j
		}
	}
	pairs("<!--", "-->")
	pairs("%%", "%%")
	pairs("$$", "$$")
	pairs("-----BEGIN", "-----END")
	// An armored block runs to the end of its END line.
	for i := range ivs {
		if strings.HasSuffix(s[ivs[i].start:ivs[i].end], "-----END") {
			if k := strings.IndexByte(s[ivs[i].end:], '\n'); k >= 0 {
				ivs[i].end += k
			} else {
				ivs[i].end = len(s)
			}
		}
	}
	// Fences, as fenced reads them, and the code spans between them.
	var fence string
	open, prose := 0, 0
	for i := 0; i < len(s); {
		end := strings.IndexByte(s[i:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += i + 1
		}
		line := s[i:end]
		if line != "" && (line[0] == ' ' || line[0] == '`' || line[0] == '~') {
			marker := fenceMarker(line)
			switch {
			case fence == "" && marker != "":
				ivs = append(ivs, codeSpans(s, prose, i)...)
				fence, open = marker, i
			case fence != "" && marker != "" && marker[0] == fence[0] && len(marker) >= len(fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), marker[:1])) == "":
				ivs = append(ivs, interval{open, end})
				fence, prose = "", end
			}
		}
		i = end
	}
	if fence != "" {
		ivs = append(ivs, interval{open, len(s)})
	} else {
		ivs = append(ivs, codeSpans(s, prose, len(s))...)
	}
	return ivs
}

// codeSpans are the code spans of s[from:to], text outside fences, as
// [spans] pairs backtick runs.
func codeSpans(s string, from, to int) []interval {
	var ivs []interval
	t := s[:to]
	for i := from; i < to; {
		k := strings.IndexByte(t[i:], '`')
		if k < 0 {
			break
		}
		k += i
		n := k
		for n < to && t[n] == '`' {
			n++
		}
		run := t[k:n]
		closing := closingRun(t, run, n)
		if closing < 0 {
			i = n
			continue
		}
		ivs = append(ivs, interval{k, closing + len(run)})
		i = closing + len(run)
	}
	return ivs
}

// closingRun is where in s, from from on, a backtick run of exactly
// run's length begins (the one that closes a code span opened by run), or
// -1.
func closingRun(s, run string, from int) int {
	for j := from; j < len(s); {
		k := strings.Index(s[j:], run)
		if k < 0 {
			return -1
		}
		k += j
		e := k + len(run)
		if (k == 0 || s[k-1] != '`') && (e == len(s) || s[e] != '`') {
			return k
		}
		for e < len(s) && s[e] == '`' {
			e++
		}
		j = e
	}
	return -1
}

// maskQuarantined shows a log hit as another agent may see it (SPEC §2).
// When the entry at the hit is quarantined, its title, heading and
// snippet become the entry's notice and it reports true: none of its text
// reaches the result. Otherwise it returns the data to take the snippet
// from, with any quarantined entry the hit's lines reach into masked.
// data is the hit's file (nil: unreadable; a title that fails the scan is
// masked all the same).
func (ix *Index) maskQuarantined(h *Hit, data []byte) ([]byte, bool) {
	notice := ""
	if data == nil {
		if rule := scan.RuleOf(h.Title + "\n" + h.Heading); rule != "" {
			notice = "[QUARANTINED: " + rule + "] (see " + h.Path + ", nexus log read --raw)"
		}
	} else if l, err := livelog.Open(ix.v, livelog.Options{}); err == nil {
		sec := sectionBytes(data, h.Line, h.EndLine)
		shown := l.Shown(h.Path, sec, h.Line)
		if bytes.Equal(shown, sec) {
			return data, false
		}
		first, _, _ := bytes.Cut(shown, []byte("\n"))
		if !bytes.HasPrefix(first, []byte("[QUARANTINED: ")) {
			return l.Shown(h.Path, data, 1), false
		}
		notice = strings.TrimSpace(string(first))
	}
	if notice == "" {
		return data, false
	}
	h.Title, h.Heading, h.Snippet = notice, notice, notice
	return nil, true
}

// readHit reads a hit's file (its path is as on disk; an index of an
// older schema may hold the NFC form of an NFD name). Invalid UTF-8 is
// replaced, so such a note still shows its text.
func (ix *Index) readHit(rel string) []byte {
	data, err := readRegular(ix.v.Root(), rel)
	if err != nil {
		data, err = readRegular(ix.v.Root(), norm.NFD.String(rel))
	}
	if err != nil {
		return nil
	}
	if !utf8.Valid(data) {
		data = bytes.ToValidUTF8(data, []byte("\uFFFD"))
	}
	if isCanvas(rel) {
		return canvas.Text(data) // its text, line for line
	}
	return bytes.TrimPrefix(data, []byte("\ufeff"))
}

// readRegular reads the vault's file rel if it is a regular file inside
// the vault, as the index reads notes: not through a symlink (the file
// may have been replaced by one since it was indexed, and a hit must not
// show a file from outside the vault).
func readRegular(root, rel string) ([]byte, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	name := filepath.FromSlash(rel)
	st, err := r.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", rel)
	}
	return r.ReadFile(name)
}

// sectionBytes cuts lines line..end (1-based, inclusive; end < line
// means to the end of the file) out of a note, leaving out the
// frontmatter, without splitting the whole file into lines.
func sectionBytes(data []byte, line, end int) []byte {
	_, body, ok := vault.SplitFrontmatter(data)
	skip := 0
	if ok {
		skip = bytes.Count(data[:len(data)-len(body)], []byte("\n"))
	}
	from, to := line-1, end
	if from < skip {
		from = skip
	}
	start, n := 0, 0
	for n < from {
		k := bytes.IndexByte(data[start:], '\n')
		if k < 0 {
			return nil
		}
		start += k + 1
		n++
	}
	stop := start
	for to <= from || n < to {
		k := bytes.IndexByte(data[stop:], '\n')
		if k < 0 {
			stop = len(data)
			break
		}
		stop += k + 1
		n++
	}
	return data[start:stop]
}

var (
	htmlCommentRe = regexp.MustCompile(`(?s)<!--.*?-->`)
	headingMarkRe = regexp.MustCompile(`(?m)^[ \t]{0,3}#{1,6}[ \t]+`)
	// quoteMarkRe is a blockquote's > marks and a callout's [!type]
	// (folded or not) at a line's start; footnoteRe a footnote reference.
	quoteMarkRe = regexp.MustCompile(`(?m)^[ \t]{0,3}(?:>[ \t]?)+(?:\[![\w-]+\][+-]?[ \t]*)?`)
	footnoteRe  = regexp.MustCompile(`\[\^[^\]\s]+\]`)
	// escapeRe is a markdown backslash escape of ASCII punctuation.
	escapeRe = regexp.MustCompile(`\\([!-/:-@\[-` + "`" + `{-~])`)
	// highlightRe and strikeRe are ==text== and ~~text~~, the markers
	// touching the text (a == b is not a highlight).
	highlightRe = regexp.MustCompile(`==([^=\s](?:[^=\n]*[^=\s])?)==`)
	strikeRe    = regexp.MustCompile(`~~([^~\s](?:[^~\n]*[^~\s])?)~~`)
)

// snippetMarkup is the markup a snippet drops outside code.
var snippetMarkup = strings.NewReplacer("**", "", "__", "")

// snippetText is a section as a reader sees it: links as their text, no
// comments (HTML ones hold the live log's signatures), math, block ids,
// code fences and backticks; outside code, no heading marks, blockquote
// and callout marks, footnote references, or the markers of bold,
// highlight and strikethrough. Code is shown as written: a === b, [^a-z]
// and __init__ are code.
func snippetText(sec []byte) string {
	s := string(sec)
	if strings.Contains(s, "<!--") {
		s = htmlCommentRe.ReplaceAllString(s, " ")
	}
	s = strings.ReplaceAll(markdown.Display(s), "\r", "")
	var b strings.Builder
	b.Grow(len(s))
	fenced(s, func(text string, code bool) {
		if code {
			b.WriteString(text)
			return
		}
		// The marks at a line's start first: a code span is never there.
		if strings.IndexByte(text, '#') >= 0 {
			text = headingMarkRe.ReplaceAllString(text, "")
		}
		if strings.IndexByte(text, '>') >= 0 {
			text = quoteMarkRe.ReplaceAllString(text, "")
		}
		spans(text, func(text string, code bool) {
			if code {
				b.WriteString(text)
			} else {
				b.WriteString(inlineText(text))
			}
		})
	})
	return shownText(b.String())
}

// inlineText drops the inline markup of text outside code (see
// [snippetText]).
func inlineText(s string) string {
	if strings.IndexByte(s, '<') >= 0 {
		s = markdown.HTMLTagRe.ReplaceAllString(s, " ")
	}
	if strings.IndexByte(s, '&') >= 0 {
		s = html.UnescapeString(s) // &amp; as shown: &
	}
	if strings.IndexByte(s, '\\') >= 0 {
		s = escapeRe.ReplaceAllString(s, "$1") // 4\. and \[x\] as read: 4. and [x]
	}
	if strings.Contains(s, "[^") {
		s = footnoteRe.ReplaceAllString(s, "")
	}
	if strings.Contains(s, "==") {
		s = highlightRe.ReplaceAllString(s, "$1")
	}
	if strings.Contains(s, "~~") {
		s = strikeRe.ReplaceAllString(s, "$1")
	}
	return snippetMarkup.Replace(s)
}

// fenced calls fn on the pieces of s in order, saying which are fenced
// code blocks (their fence lines dropped, the newlines kept). A fence
// left open runs to the end, as in CommonMark.
func fenced(s string, fn func(text string, code bool)) {
	var fence string // the open fence's marker, "" outside a block
	prose := 0       // where the text not yet given to fn starts
	for i := 0; i < len(s); {
		end := strings.IndexByte(s[i:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += i + 1
		}
		line := s[i:end]
		marker := fenceMarker(line)
		switch {
		case fence == "" && marker != "":
			fn(s[prose:i], false)
			fn("\n", false)
			fence, prose = marker, end
		case fence != "" && marker != "" && marker[0] == fence[0] && len(marker) >= len(fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), marker[:1])) == "":
			fn(s[prose:i], true)
			fn("\n", false)
			fence, prose = "", end
		}
		i = end
	}
	fn(s[prose:], fence != "")
}

// fenceMarker is the run of ``` or ~~~ (three or more) a fence line
// starts with, after at most three spaces; "" for any other line.
func fenceMarker(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || t[0] == '`' && strings.IndexByte(t[n:], '`') >= 0 {
		return ""
	}
	return t[:n]
}

// spans calls fn on the text and the code spans of s, a text outside
// fenced blocks, in order: a span's text without its backticks; a
// backtick run without its closing run of the same length is dropped.
func spans(s string, fn func(text string, code bool)) {
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			if s != "" {
				fn(s, false)
			}
			return
		}
		n := i
		for n < len(s) && s[n] == '`' {
			n++
		}
		run := s[i:n]
		closing := closingRun(s, run, n)
		if closing < 0 {
			fn(s[:i], false)
			s = s[n:]
			continue
		}
		fn(s[:i], false)
		fn(s[n:closing], true)
		s = s[closing+len(run):]
	}
}

// propsText is the note's frontmatter as "key: value" lines, links as
// their text, for the snippet of a note matched by its properties.
func propsText(data []byte) string {
	_, body, ok := vault.SplitFrontmatter(data)
	if !ok {
		return ""
	}
	n := markdown.Parse("", data[:len(data)-len(body)])
	keys := make([]string, 0, len(n.Props))
	for k := range n.Props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var lines []string
	for _, k := range keys {
		v := strings.ReplaceAll(propertyDisplay(n.Props[k]), "\n", ", ")
		if strings.TrimSpace(v) != "" {
			lines = append(lines, k+": "+v)
		}
	}
	return shownText(strings.Join(lines, "\n"))
}

// shownText is text as a hit shows it (its title, heading and snippet):
// without invisible code points but for those that draw emoji (see
// invisible.DropShown), ligatures as their letters, in NFC.
func shownText(s string) string {
	return norm.NFC.String(invisible.DropShown(ligatureLetters.Replace(s)))
}

// ligatureLetters writes the Latin ligatures of text copied from a PDF as
// their letters, as the index reads them (see fold), so that a snippet
// finds and centres on "financial" in "ﬁnancial".
var ligatureLetters = func() *strings.Replacer {
	var pairs []string
	for i, letters := range ligatures {
		pairs = append(pairs, string(rune(0xFB00+i)), letters)
	}
	return strings.NewReplacer(pairs...)
}()

// propertyDisplay is a property value as shown (links by their text).
func propertyDisplay(v any) string {
	switch x := v.(type) {
	case string:
		return markdown.DisplayProperty(x)
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			if s := propertyDisplay(e); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ", ")
	}
	return markdown.PropertyText(v)
}

// atBestSection points h, a hit on a long note, at its best section:
// the one holding the most distinct query terms (a heading holding one
// counting half a term more, two of them side by side a quarter), then
// the most of their occurrences, the first of equals; the note's first section when none holds a term (it
// matched by its title or properties). data is the note (nil:
// unreadable, h unchanged).
//
// It costs one pass over the note and a substring search per term, as
// the snippet's window does (the terms are found as bestWindow finds
// them), and never renders a section: only the chosen one is, for its
// snippet.
func atBestSection(h *Hit, spans []span, terms map[string]bool, data []byte) {
	if data == nil || len(spans) == 0 {
		return
	}
	starts := []int{0} // byte offset of each line of data
	for i := 0; i < len(data); {
		k := bytes.IndexByte(data[i:], '\n')
		if k < 0 {
			break
		}
		i += k + 1
		starts = append(starts, i)
	}
	type place struct {
		at   int
		term string
	}
	type tally struct {
		terms  map[string]bool
		n      int
		places []place // where the terms are, up to maxPlaces
	}
	const maxPlaces = 4096
	counts := make([]tally, len(spans))
	count := func(t string, at int) {
		line := sort.SearchInts(starts, at+1) // 1-based line of byte at
		i := sort.Search(len(spans), func(i int) bool { return spans[i].end >= line })
		if i == len(spans) || spans[i].line > line {
			return // the frontmatter, or between spans
		}
		if counts[i].terms == nil {
			counts[i].terms = map[string]bool{}
		}
		counts[i].terms[t] = true
		counts[i].n++
		if len(counts[i].places) < maxPlaces {
			counts[i].places = append(counts[i].places, place{at, t})
		}
	}
	if !termsAt(data, terms, count) {
		// A term the text may hold in another case or with accents
		// only found in the text as the snippet searches it.
		text := string(data)
		lower, lowerAt, accentsAt := searchText(text)
		for t := range terms {
			for _, form := range termForms(t) {
				for off, n := 0, 0; n < snippetScanCap*4; n++ {
					k := strings.Index(lower[off:], form)
					if k < 0 {
						break
					}
					at := lowerAt.src(accentsAt.src(off + k))
					off += k + len(form)
					if !midWord(text, at) {
						count(t, at)
					}
				}
			}
		}
	}
	best, bestScore, bestN := 0, 0.0, 0
	for i, c := range counts {
		score := float64(len(c.terms))
		if score > 0 && spans[i].heading != "" {
			if _, _, _, hn := bestWindowN(spans[i].heading, terms); hn > 0 {
				score += 0.5
			}
		}
		if len(c.terms) > 1 {
			// Two terms side by side (a query's words together).
			sort.Slice(c.places, func(a, b int) bool { return c.places[a].at < c.places[b].at })
			for k := 1; k < len(c.places); k++ {
				if a, b := c.places[k-1], c.places[k]; a.term != b.term && sideBySide(data, a.at, a.term, b.at) {
					score += 0.25
					break
				}
			}
		}
		if score > bestScore || score == bestScore && score > 0 && c.n > bestN {
			best, bestScore, bestN = i, score, c.n
		}
	}
	sp := spans[best]
	h.Line, h.EndLine, h.Heading = sp.line, sp.end, sp.heading
}

// sideBySide reports whether the term at b follows the word holding
// term a (at a) with only spaces and punctuation between, on one line:
// "backup, restore", not "backup.\nThen restore".
func sideBySide(data []byte, a int, term string, b int) bool {
	end := a + len(term)
	if b <= end {
		return true // touching or overlapping (CJK pairs)
	}
	gap := data[end:b]
	// The rest of a's word (a term is a stem: restor of restore).
	for len(gap) > 0 {
		r, n := utf8.DecodeRune(gap)
		if !wordRune(r) {
			break
		}
		gap = gap[n:]
	}
	if len(gap) == 0 || len(gap) > 8 {
		return false
	}
	for _, r := range string(gap) {
		if r == '\n' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// termForms are the spellings of term searched for: with a typographic
// apostrophe too, which the index reads as '.
func termForms(t string) []string {
	if t == "" {
		return nil
	}
	if strings.Contains(t, "'") {
		return []string{t, strings.ReplaceAll(t, "'", "\u2019")}
	}
	return []string{t}
}

// termsAt finds the terms in data as written, without lower-casing it (a
// long note is not copied): an ASCII term in lower case, capitalised and
// in capitals, a term of letters without case (Hangul, CJK) as it is.
// It calls fn with each term and where it starts (outside a word), and
// reports false, having called nothing, when a term could be written
// otherwise (accents, other scripts' cases, ' and ’) or none is found.
func termsAt(data []byte, terms map[string]bool, fn func(t string, at int)) bool {
	type find struct{ term, form string }
	var finds []find
	for t := range terms {
		if t == "" {
			continue
		}
		ascii, caseless := true, true
		for _, r := range t {
			if r >= utf8.RuneSelf {
				ascii = false
				if unicode.ToUpper(r) != r || unicode.ToLower(r) != r || r == '\u2019' {
					caseless = false
				}
			}
		}
		switch {
		case strings.ContainsRune(t, '\''):
			return false
		case ascii:
			forms := []string{t, strings.ToUpper(t[:1]) + t[1:], strings.ToUpper(t)}
			for _, f := range uniq(forms) {
				finds = append(finds, find{t, f})
			}
		case caseless:
			finds = append(finds, find{t, t})
		default:
			return false
		}
	}
	if len(finds) > 0 && mayHaveAccent(data) {
		return false // résumé holds resume only without its accents
	}
	type hit struct {
		term string
		at   int
	}
	var hits []hit
	for _, f := range finds {
		form := []byte(f.form)
		for off, n := 0, 0; n < snippetScanCap*4; n++ {
			k := bytes.Index(data[off:], form)
			if k < 0 {
				break
			}
			at := off + k
			off = at + len(form)
			if !midWordBytes(data, at) {
				hits = append(hits, hit{f.term, at})
			}
		}
	}
	if len(hits) == 0 {
		return false
	}
	for _, h := range hits {
		fn(h.term, h.at)
	}
	return true
}

// midWordBytes is midWord on bytes.
func midWordBytes(data []byte, i int) bool {
	if i <= 0 || i >= len(data) {
		return false
	}
	before, _ := utf8.DecodeLastRune(data[:i])
	after, _ := utf8.DecodeRune(data[i:])
	return wordRune(before) && wordRune(after)
}

// bestWindow picks the snippetRunes-long window of text with the most
// distinct query terms; found is false when text holds none (the window
// is then text's start).
func bestWindow(text string, terms map[string]bool) (win string, start, end int, found bool) {
	win, start, end, n := bestWindowN(text, terms)
	return win, start, end, n > 0
}

// bestWindowN is bestWindow, saying how many distinct terms the window
// holds.
func bestWindowN(text string, terms map[string]bool) (win string, start, end, nterms int) {
	type span struct {
		start, end int
		term       string
	}
	lower, lowerAt, accentsAt := searchText(text)
	src := func(k int) int { return lowerAt.src(accentsAt.src(k)) }
	var cands []span
	for t := range terms {
		if t == "" {
			continue
		}
		forms := []string{t}
		if strings.Contains(t, "'") {
			// The note may have the typographic apostrophe, which
			// the index reads as ' (see fold).
			forms = append(forms, strings.ReplaceAll(t, "'", "\u2019"))
		}
		for _, form := range forms {
			for off, n := 0, 0; n < snippetScanCap; n++ {
				k := strings.Index(lower[off:], form)
				if k < 0 {
					break
				}
				cands = append(cands, span{src(off + k), src(off + k + len(form)), t})
				off += k + len(form)
			}
		}
	}
	// A term found inside a word ("c" in "Misc") is no match of it; keep
	// those only when there is nothing else.
	atWord := cands[:0:0]
	for _, c := range cands {
		if !midWord(text, c.start) {
			atWord = append(atWord, c)
		}
	}
	if len(atWord) > 0 {
		cands = atWord
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].start < cands[j].start })
	maxBytes := snippetRunes * 2
	bestN := 0
	if len(cands) > 0 {
		best, bestEnd := 0, 0
		for i := range cands {
			seen := map[string]bool{}
			last := cands[i].end
			for j := i; j < len(cands) && cands[j].end-cands[i].start <= maxBytes; j++ {
				seen[cands[j].term] = true
				last = max(last, cands[j].end)
			}
			if len(seen) > bestN {
				best, bestN, bestEnd = i, len(seen), last
			}
		}
		// Centre the matched stretch in the window.
		matched := utf8.RuneCountInString(text[cands[best].start:bestEnd])
		back := max(0, (snippetRunes-matched)/2)
		start = cands[best].start
		for n := 0; start > 0 && n < back; n++ {
			_, sz := utf8.DecodeLastRuneInString(text[:start])
			start -= sz
		}
		// Start on a word boundary, when one is near: after the next
		// space, or back at the start of the word the window cuts.
		if start > 0 {
			if k := strings.IndexAny(text[start:cands[best].start], " \n"); k >= 0 && k < 30 {
				start += k + 1
			} else {
				for n := 0; n < 30 && midWord(text, start); n++ {
					_, sz := utf8.DecodeLastRuneInString(text[:start])
					start -= sz
				}
			}
		}
	}
	end = start
	for n := 0; end < len(text) && n < snippetRunes; n++ {
		_, sz := utf8.DecodeRuneInString(text[end:])
		end += sz
	}
	return text[start:end], start, end, bestN
}

// midWord reports whether byte i of text is inside a word of a spaced
// script: a letter, digit or mark on each side of it, neither of them of
// a script written without spaces (CJK, Thai…), where any two letters
// can be a match.
func midWord(text string, i int) bool {
	if i <= 0 || i >= len(text) {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(text[:i])
	after, _ := utf8.DecodeRuneInString(text[i:])
	return wordRune(before) && wordRune(after)
}

func wordRune(r rune) bool {
	return (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) && !isCJK(r) && !isUnspaced(r)
}

// searchText is s as the snippet looks for terms in it: lower-cased, and
// without the accents of Latin and Greek letters, which terms have lost
// (see accentFilterName). A byte k of text is byte lower.src(accents.src(k))
// of s: lower maps over the letters whose lower case is longer or
// shorter in UTF-8 (ẞ, the Kelvin sign), accents over the accents dropped
// (nil maps are the identity).
func searchText(s string) (text string, lower, accents offsetMap) {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s), nil, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		l := unicode.ToLower(r)
		if l == r {
			b = append(b, s[i:i+n]...) // invalid bytes too, as they are
			i += n
			continue
		}
		b = utf8.AppendRune(b, l)
		i += n
		if utf8.RuneLen(l) != n {
			if lower == nil {
				lower = offsetMap{{0, 0}}
			}
			lower = append(lower, stretch{len(b), i})
		}
	}
	if mayHaveAccent(b) {
		b, accents = unaccentAt(b, true)
	}
	return string(b), lower, accents
}

// snippetWords splits a window into words the way the index does
// (Unicode word boundaries), for highlighting whole words.
var snippetWords = unicodetok.NewUnicodeTokenizer()

// highlight wraps in ** ** every word of win that holds a query term.
func highlight(an analysis.Analyzer, terms map[string]bool, win string) string {
	if an == nil || len(terms) == 0 {
		return win
	}
	src := []byte(win)
	// The analyzer's offsets are those of the folded text: fold the
	// window here too, to map them back to it.
	text, start, end := src, []int(nil), []int(nil)
	if needsFold(src) {
		text, start, end = fold(src)
	}
	var hits [][2]int // byte spans of matching terms
	for _, t := range an.Analyze(text) {
		if !terms[string(t.Term)] || t.Start < 0 || t.End > len(text) || t.Start >= t.End {
			continue
		}
		if start != nil {
			hits = append(hits, [2]int{start[t.Start], end[t.End-1]})
		} else {
			hits = append(hits, [2]int{t.Start, t.End})
		}
	}
	if len(hits) == 0 {
		return win
	}
	// The words holding a hit, those that touch (雨 and が, CJK words
	// with no space between them) made one: "**雨****が**" is not
	// markdown bold.
	var spans [][2]int
	pos := 0
	for _, w := range withUnspaced(src, snippetWords.Tokenize(src)) {
		if w.Start < pos {
			continue
		}
		match := false
		for _, h := range hits {
			if h[0] < w.End && w.Start < h[1] {
				match = true
				break
			}
		}
		if !match {
			continue
		}
		if n := len(spans); n > 0 && spans[n-1][1] == w.Start {
			spans[n-1][1] = w.End
		} else {
			spans = append(spans, [2]int{w.Start, w.End})
		}
		pos = w.End
	}
	var b strings.Builder
	pos = 0
	for _, sp := range spans {
		b.WriteString(win[pos:sp[0]])
		b.WriteString("**" + win[sp[0]:sp[1]] + "**")
		pos = sp[1]
	}
	b.WriteString(win[pos:])
	return b.String()
}

// windowRule scans a snippet's window as it leaves the process (docs/scan.md,
// "At read time"): the paragraphs (and armored key blocks) of text that
// the window text[start:end] reaches into, each whole, so a window cut
// through a secret is judged by all of it. It returns the rule hit, or "".
// Only the text around the window is scanned, not the note.
func windowRule(text string, start, end int) string {
	start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
	lines := strings.SplitAfter(text, "\n")
	lo, hi, off := -1, 0, 0
	for i, l := range lines {
		if lo < 0 && off+len(l) > start {
			lo = i
		}
		off += len(l)
		hi = i + 1
		if off >= end && lo >= 0 {
			break
		}
	}
	if lo < 0 {
		return ""
	}
	_, rules := scan.WithholdLines(lines, lo, hi, func(string, int, int) string { return "" })
	if len(rules) > 0 {
		return rules[0]
	}
	return ""
}

// withholdTitles replaces a hit's title and heading that fail the scan
// with the marker of the read-time rule: they leave the process with the
// snippet (search results over MCP and 'nexus search --json').
func withholdTitles(h *Hit) {
	for _, f := range []struct {
		name string
		p    *string
	}{{"title", &h.Title}, {"heading", &h.Heading}} {
		if rule := scan.ReadRule(*f.p); rule != "" {
			*f.p = scan.Withheld(rule, "the "+f.name+" of "+h.Path, "a person can read the note itself")
		}
	}
}
