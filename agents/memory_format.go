package agents

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// EntrySeparator joins the entries of MEMORY.md and USER.md on disk: a line
// holding only "§", exactly as Hermes Agent writes it.
const EntrySeparator = "\n§\n"

// ParseEntries splits the bytes of a bounded-memory file into its entries.
//
// A line holding only "§" (surrounding blanks allowed) separates entries;
// "§" elsewhere in a line is text. Each entry is trimmed of surrounding
// white space and empty entries are dropped. CRLF line ends are read as LF (CR before a line end is dropped),
// and a trailing newline and a leading byte-order mark are ignored.
// Identical entries are all returned.
func ParseEntries(data []byte) []string {
	// Some Windows editors start a UTF-8 file with a byte-order mark; it is
	// not part of the first entry.
	s := normalizeNewlines(strings.TrimPrefix(string(data), "\uFEFF"))
	var entries []string
	var cur strings.Builder
	flush := func() {
		if e := strings.TrimSpace(cur.String()); e != "" {
			entries = append(entries, e)
		}
		cur.Reset()
	}
	for s != "" {
		line, rest, found := strings.Cut(s, "\n")
		if isSeparatorLine(line) {
			flush()
		} else {
			cur.WriteString(line)
			if found {
				cur.WriteByte('\n')
			}
		}
		s = rest
	}
	flush()
	return entries
}

// normalizeNewlines turns CRLF (and any run of CR before LF, or at the end)
// into LF, the way the file is read.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	return strings.Join(lines, "\n")
}

// isSeparatorLine reports whether a line (without its newline) separates
// entries.
func isSeparatorLine(line string) bool { return strings.TrimSpace(line) == "§" }

// FormatEntries renders entries the way Hermes Agent writes them: joined by
// "\n§\n", with no trailing newline. No entries render as no bytes. Entries
// are written as given; [Memory] only ever passes trimmed, non-empty entries
// that hold no separator line.
func FormatEntries(entries []string) []byte {
	return []byte(strings.Join(entries, EntrySeparator))
}

// CharCount is the size of entries as bounded memory counts it: Unicode
// code points of the entries joined by the separator (which counts 3). A
// Korean syllable or an emoji counts 1, not its UTF-8 bytes.
func CharCount(entries []string) int {
	if len(entries) == 0 {
		return 0
	}
	n := (len(entries) - 1) * utf8.RuneCountInString(EntrySeparator)
	for _, e := range entries {
		n += utf8.RuneCountInString(e)
	}
	return n
}

// UsagePercent is chars as a whole percentage of limit, rounded down and
// capped at 100.
func UsagePercent(chars, limit int) int {
	if limit <= 0 {
		return 0
	}
	return min(100, chars*100/limit)
}

// FormatUsage renders usage the way Hermes Agent reports it:
// "67% — 1,474/2,200 chars" (percent rounded down, thousands separators,
// an em dash).
func FormatUsage(chars, limit int) string {
	return strconv.Itoa(UsagePercent(chars, limit)) + "% — " + groupThousands(chars) + "/" + groupThousands(limit) + " chars"
}

// groupThousands renders n with a comma every three digits: 1,474.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// dedupeEntries keeps the first of identical entries, in order. Hermes Agent
// treats identical entries as one, and so does [Memory].
func dedupeEntries(entries []string) []string {
	seen := make(map[string]bool, len(entries))
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}
