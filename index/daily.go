package index

import (
	"encoding/json"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/vault"
)

// Daily notes are dated by the date in their file name (SPEC §5, issue
// 32), so that `path:Daily/ --since D --until D` finds day D's note
// whatever its mtime: by Obsidian's daily-notes format when
// .obsidian/daily-notes.json sets one (its "folder" and its moment.js
// "format"), else by a YYYY-MM-DD in the file name. A date in the
// frontmatter (updated, date, created) still comes first.

// dailyNotesFile is the settings file of Obsidian's core Daily notes
// plugin, read once when the index is opened.
const dailyNotesFile = ".obsidian/daily-notes.json"

// dailyFormat is a daily-notes file name format, as a regexp over the
// path below the folder (without ".md") whose groups are named y, m, d.
type dailyFormat struct {
	folder string // NFC, lower-cased, "" for the whole vault
	re     *regexp.Regexp
}

// isoDayRe is the fallback: YYYY-MM-DD in a file name.
var isoDayRe = regexp.MustCompile(`(?:^|[^0-9])(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})(?:[^0-9]|$)`)

// loadDailyFormat reads the vault's daily-notes settings; nil when there
// are none or their format has no year, month and day.
func loadDailyFormat(root string) *dailyFormat {
	data, err := vault.ReadFile(filepath.Join(root, filepath.FromSlash(dailyNotesFile)))
	if err != nil {
		return nil
	}
	var s struct {
		Format string `json:"format"`
		Folder string `json:"folder"`
	}
	if json.Unmarshal(data, &s) != nil {
		return nil
	}
	return newDailyFormat(s.Format, s.Folder)
}

// newDailyFormat makes a dailyFormat of a moment.js format (default
// YYYY-MM-DD, as Obsidian's) and a folder.
func newDailyFormat(format, folder string) *dailyFormat {
	if strings.TrimSpace(format) == "" {
		format = "YYYY-MM-DD"
	}
	expr, ok := momentRegexp(format)
	if !ok {
		return nil
	}
	re, err := regexp.Compile("(?i)^" + expr + "$")
	if err != nil {
		return nil
	}
	folder = strings.Trim(strings.ReplaceAll(strings.TrimSpace(folder), `\`, "/"), "/")
	return &dailyFormat{folder: strings.ToLower(norm.NFC.String(folder)), re: re}
}

var (
	monthNames = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}
	// momentTokens are the moment.js tokens converted, longest first.
	momentTokens = []struct{ tok, expr string }{
		{"YYYY", `(?P<y>[0-9]{4})`}, {"YY", `(?P<yy>[0-9]{2})`},
		{"MMMM", `(?P<mmmm>[A-Za-z]+)`}, {"MMM", `(?P<mmm>[A-Za-z]{3})`}, {"MM", `(?P<m>[0-9]{2})`}, {"Mo", `(?P<m>[0-9]{1,2})(?:st|nd|rd|th)`}, {"M", `(?P<m>[0-9]{1,2})`},
		{"DDDD", `[0-9]{3}`}, {"DDD", `[0-9]{1,3}`}, {"DD", `(?P<d>[0-9]{2})`}, {"Do", `(?P<d>[0-9]{1,2})(?:st|nd|rd|th)`}, {"D", `(?P<d>[0-9]{1,2})`},
		{"dddd", `[A-Za-z]+`}, {"ddd", `[A-Za-z]{3}`}, {"dd", `[A-Za-z]{2}`}, {"d", `[0-6]`},
		{"gggg", `[0-9]{4}`}, {"GGGG", `[0-9]{4}`}, {"ww", `[0-9]{2}`}, {"WW", `[0-9]{2}`}, {"w", `[0-9]{1,2}`}, {"W", `[0-9]{1,2}`},
		{"Q", `[1-4]`}, {"E", `[1-7]`}, {"e", `[0-6]`},
	}
)

// momentRegexp converts a moment.js format to a regexp; ok is false when
// it does not name a year, a month and a day of the month (a weekly or
// monthly note has no one day).
func momentRegexp(format string) (expr string, ok bool) {
	var b strings.Builder
	seen := map[string]bool{}
	for i := 0; i < len(format); {
		if format[i] == '[' {
			end := strings.IndexByte(format[i:], ']')
			if end < 0 {
				b.WriteString(regexp.QuoteMeta(format[i:]))
				break
			}
			b.WriteString(regexp.QuoteMeta(format[i+1 : i+end]))
			i += end + 1
			continue
		}
		matched := false
		for _, t := range momentTokens {
			if strings.HasPrefix(format[i:], t.tok) {
				group := ""
				if j := strings.Index(t.expr, "?P<"); j >= 0 {
					group = t.expr[j+3 : j+3+strings.IndexByte(t.expr[j+3:], '>')]
				}
				if group != "" && seen[group] {
					// A token used twice (YYYY/YYYY-MM-DD): the
					// second must match the same text, which regexp
					// cannot say; it is left unnamed.
					b.WriteString(strings.Replace(t.expr, "?P<"+group+">", "", 1))
				} else {
					b.WriteString(t.expr)
					seen[group] = true
				}
				i += len(t.tok)
				matched = true
				break
			}
		}
		if !matched {
			_, size := utf8.DecodeRuneInString(format[i:])
			b.WriteString(regexp.QuoteMeta(format[i : i+size]))
			i += size
		}
	}
	year := seen["y"] || seen["yy"]
	month := seen["m"] || seen["mmm"] || seen["mmmm"]
	return b.String(), year && month && seen["d"]
}

// fallbackDate is a note's date when its frontmatter gives none: the date
// in its file name, else its mtime.
func (ix *Index) fallbackDate(rel string, mtime time.Time) time.Time {
	ix.dailyOnce.Do(func() { ix.daily = loadDailyFormat(ix.v.Root()) })
	if t, ok := nameDate(rel, ix.daily); ok {
		return t
	}
	return mtime
}

// nameDate is the date a vault path's file name gives (see above), at
// 00:00 UTC; ok is false when it gives none.
func nameDate(rel string, df *dailyFormat) (time.Time, bool) {
	stem := strings.TrimSuffix(rel, path.Ext(rel))
	if df != nil {
		key := norm.NFC.String(stem)
		below := key
		if df.folder != "" {
			if !strings.HasPrefix(strings.ToLower(key), df.folder+"/") {
				below = ""
			} else {
				below = key[len(df.folder)+1:]
			}
		}
		if below != "" {
			if t, ok := matchDate(df.re, below); ok {
				return t, true
			}
		}
	}
	return matchDate(isoDayRe, path.Base(stem))
}

// matchDate reads the named groups of re's match in s as a date.
func matchDate(re *regexp.Regexp, s string) (time.Time, bool) {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	var y, mo, d int
	for i, name := range re.SubexpNames() {
		v := m[i]
		switch name {
		case "y":
			y, _ = strconv.Atoi(v)
		case "yy":
			n, _ := strconv.Atoi(v)
			y = 2000 + n
			if n >= 69 { // moment.js: 69-99 are 1969-1999
				y = 1900 + n
			}
		case "m":
			mo, _ = strconv.Atoi(v)
		case "mmm", "mmmm":
			for k, mn := range monthNames {
				if strings.HasPrefix(mn, strings.ToLower(v)) && len(v) >= 3 {
					mo = k + 1
				}
			}
		case "d":
			d, _ = strconv.Atoi(v)
		}
	}
	if y < 1 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return time.Time{}, false // 2023-02-30
	}
	return t, true
}
