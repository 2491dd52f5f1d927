package main

import (
	"io"
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// table prints aligned columns. Unlike text/tabwriter, which counts code
// points, it measures display width: a Hangul syllable or a CJK ideograph
// takes two terminal columns, a combining mark none, so a Korean name does
// not push the rest of its row out of line.
type table struct {
	rows [][]string
}

// row adds a row. Tabs, newlines and other control characters in a cell
// become spaces: a cell is one line.
func (t *table) row(cells ...string) {
	clean := make([]string, len(cells))
	for i, c := range cells {
		clean[i] = strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return ' '
			}
			return r
		}, c)
	}
	t.rows = append(t.rows, clean)
}

// write prints the rows, columns two spaces apart; the last column of a
// row is not padded.
func (t *table) write(w io.Writer) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)+2))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// displayWidth is the number of terminal columns s takes.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		switch {
		case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf), r == '\u200b',
			0x1160 <= r && r <= 0x11FF, 0xD7B0 <= r && r <= 0xD7FF:
			// combining marks, invisible format characters, and the
			// vowels and final consonants of a decomposed (NFD) Hangul
			// syllable, which join its leading consonant
		case width.LookupRune(r).Kind() == width.EastAsianWide, width.LookupRune(r).Kind() == width.EastAsianFullwidth:
			n += 2
		default:
			n++
		}
	}
	return n
}
