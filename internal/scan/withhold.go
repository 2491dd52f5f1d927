package scan

import (
	"fmt"
	"strings"

	"github.com/nexus-memory/nexus/internal/invisible"
)

// The read-time rule (docs/scan.md, "At read time"): text that comes out
// of the vault towards an agent — a memory entry, a paragraph of a note,
// a line of the memory index, a fact's field, a search snippet — is
// scanned as it is returned, and a unit that fails is withheld whole: its
// place holds one marker line naming the rule and where a person can read
// it. Secrets are thereby never shown, in part or whole; injection is
// never shown either, fenced or not. One rule, the same at every door.
// Invisible code points are the exception: they are dropped from what is
// shown ([Shown]), emoji sequences kept, as control characters are, so a
// bidi override or a smuggled tag payload never comes out and an emoji
// with a zero-width joiner (👩‍💻) does not cost a paragraph.

// ReadRule is [RuleOf] for text on its way out of the vault: invisible
// code points do not count against it (the door drops them, see
// [Shown]); the other rules are tried on the text without them.
func ReadRule(s string) string {
	rule := RuleOf(s)
	if rule == RuleInvisibleUnicode {
		rule = RuleOf(invisible.Drop(s))
	}
	return rule
}

// Shown returns s as a read door shows it: without control characters
// ([Printable]) and without invisible code points other than those that
// draw emoji (invisible.DropShown).
func Shown(s string) string { return invisible.DropShown(Printable(s)) }

// Withheld returns the marker that stands in for withheld text:
//
//	[BLOCKED: RULE — WHAT failed the security scan and is withheld; HOW]
//
// what names the text ("lines 3-7 of projects/atlas.md"), how says how a
// person sees it; how may be "".
func Withheld(rule, what, how string) string {
	s := "[BLOCKED: " + rule + " — " + what + " failed the security scan and is withheld"
	if how != "" {
		s += "; " + how
	}
	return s + "]"
}

// Lines bound how far [WithholdLines] looks around the asked range for
// the start of a paragraph or of a key block.
const (
	maxBackLines  = 400
	maxBlockLines = 2000
)

// WithholdLines scans lines[lo:hi] as text read out of a note (each line
// with its "\n") and returns them with every failing unit withheld. A
// unit is a paragraph (a run of non-blank lines), or an armored block
// from a "-----BEGIN" line to its "-----END" line, blank lines and all, so
// a PGP key's body is judged with its header. Units that reach outside
// [lo, hi) are scanned whole (within maxBackLines before lo): a range
// that starts inside a key block is judged by the block.
//
// A withheld unit keeps its lines' places, so line numbers still hold:
// its first line in range holds mark(rule, first, last) (the 1-based
// lines of the whole unit) and its other lines are empty. rules lists
// the rule of each unit withheld; it is nil when nothing was.
func WithholdLines(lines []string, lo, hi int, mark func(rule string, first, last int) string) (out []string, rules []string) {
	lo, hi = max(lo, 0), min(hi, len(lines))
	if lo >= hi {
		return lines[lo:hi], nil
	}
	start := unitStart(lines, lo)
	for i := start; i < hi; {
		if blank(lines[i]) {
			i++
			continue
		}
		end := unitEnd(lines, i)
		if end > lo {
			if rule := ReadRule(strings.Join(lines[i:end], "")); rule != "" {
				if out == nil {
					out = append([]string(nil), lines[lo:hi]...)
				}
				rules = append(rules, rule)
				first := max(i, lo)
				for j := first; j < min(end, hi); j++ {
					out[j-lo] = "\n"
				}
				out[first-lo] = mark(rule, i+1, end) + "\n"
			}
		}
		i = end
	}
	if out == nil {
		return lines[lo:hi], nil
	}
	return out, rules
}

// Withhold is [WithholdLines] over a whole text: s with every failing
// paragraph or key block replaced by mark(rule, first, last) and its
// other lines left empty.
func Withhold(s string, mark func(rule string, first, last int) string) (string, []string) {
	if ReadRule(s) == "" {
		return s, nil // the common case: one scan of the whole text
	}
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	out, rules := WithholdLines(lines, 0, len(lines), mark)
	if rules == nil {
		// Text that fails only as a whole (a phrase split over
		// paragraphs): withheld whole.
		rule := ReadRule(s)
		return mark(rule, 1, len(lines)), []string{rule}
	}
	joined := strings.Join(out, "")
	if !strings.HasSuffix(s, "\n") {
		joined = strings.TrimSuffix(joined, "\n")
	}
	return joined, rules
}

// LineRange is "line N" or "lines N-M", for a marker's what.
func LineRange(first, last int) string {
	if first == last {
		return fmt.Sprintf("line %d", first)
	}
	return fmt.Sprintf("lines %d-%d", first, last)
}

func blank(line string) bool { return strings.TrimSpace(line) == "" }

// armorBegin and armorEnd report whether line opens or closes an armored
// block ("-----BEGIN PGP PRIVATE KEY BLOCK-----", "-----END ...").
func armorBegin(line string) bool { return hasFold(line, "-----begin") }
func armorEnd(line string) bool   { return hasFold(line, "-----end") }

func hasFold(line, lower string) bool {
	if !strings.Contains(line, "-----") {
		return false
	}
	return strings.Contains(strings.ToLower(line), lower)
}

// unitStart returns the first line of the unit holding line lo (lo itself
// when it is blank or starts one).
func unitStart(lines []string, lo int) int {
	floor := max(0, lo-maxBackLines)
	// Inside an armored block whose end is not yet passed?
	for j := lo; j >= floor; j-- {
		if j < lo && armorEnd(lines[j]) {
			break
		}
		if armorBegin(lines[j]) {
			return j
		}
	}
	s := lo
	for s > floor && !blank(lines[s-1]) {
		s--
	}
	return s
}

// unitEnd returns the line after the unit starting at line i (not blank).
func unitEnd(lines []string, i int) int {
	if armorBegin(lines[i]) {
		for j := i + 1; j < len(lines) && j < i+maxBlockLines; j++ {
			if armorEnd(lines[j]) {
				return j + 1
			}
		}
	}
	j := i + 1
	for j < len(lines) && !blank(lines[j]) {
		if armorBegin(lines[j]) {
			// An armored block inside a paragraph runs to its end.
			return unitEnd(lines, j)
		}
		j++
	}
	return j
}

// Printable returns s without the control characters a file can bring into
// a prompt (a binary USER.md, a pasted terminal escape): C0 controls other
// than newline and tab, DEL and the C1 controls are dropped, and bytes that
// are not UTF-8 become U+FFFD. Every read door passes its text through it.
func Printable(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		c := s[i]
		clean = (c >= 0x20 && c < 0x7F) || c == '\n' || c == '\t'
	}
	if clean {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !(r < 0x20 || (r >= 0x7F && r <= 0x9F)) {
			return r
		}
		return -1
	}, s)
}
