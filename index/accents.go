package index

import (
	"sort"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
	"golang.org/x/text/unicode/norm"
)

// accentFilterName makes a term of Latin or Greek letters without their
// accents: "résumé" is the word "resume", "Müller" "muller", "Tiếng
// Việt" "tieng viet", "Αθήνα" "αθηνα"; and the Greek final sigma is σ,
// so "ΟΔΟΣ" (upper case) and "οδος" are one word. People type words
// without their accents (on a phone, on a keyboard of another language)
// and expect to find them, as SQLite FTS5's default tokenizer and most
// search engines do; a query with the accents finds the word without
// them too. Only the accents of Latin and Greek letters go: the marks
// of other scripts are letters of their own (the dakuten of が, the
// breve of Cyrillic й), and Hangul has none. It runs after the stop
// words (all ASCII: "thé" and the Vietnamese "ăn" are words, not "the"
// and "an") and before the stemmer, so that the stemmer and the word
// pairs see the plain word.
//
// Keys (tags, agents, types, property keys) keep their accents: #café
// and #cafe are two tags in Obsidian. A property's value is text, and
// loses them as the body does.
const accentFilterName = "nexus_accents"

func init() {
	registry.RegisterTokenFilter(accentFilterName, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return accentFilter{}, nil
	})
}

type accentFilter struct{}

func (accentFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	for _, t := range in {
		if mayHaveAccent(t.Term) {
			t.Term = unaccent(t.Term)
		}
	}
	return in
}

// mayHaveAccent reports whether b holds a code point unaccent may change:
// U+00C0–U+03FF (Latin-1 letters to Greek, with the combining marks) or
// U+1E00–U+1FFF (Latin Extended Additional, Greek Extended). Nearly all
// words of nearly all vaults hold neither, and cost this scan only.
func mayHaveAccent[T string | []byte](b T) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 0xC3 && c <= 0xCF {
			return true
		}
		if c == 0xE1 && i+1 < len(b) && b[i+1] >= 0xB8 && b[i+1] <= 0xBF {
			return true
		}
	}
	return false
}

// unaccent returns term without the accents of its Latin and Greek
// letters: a letter loses the combining marks of its canonical
// decomposition, and a combining mark U+0300–U+036F after a Latin or
// Greek letter is dropped (text in NFC keeps such a mark only where no
// composed letter exists, as in "n̈"). Invalid UTF-8 is kept as it is.
// It returns term itself when nothing changes, else a new slice (term
// may be the note's own bytes).
func unaccent(term []byte) []byte {
	out, _ := unaccentAt(term, false)
	return out
}

// offsetMap maps the offsets of a text unaccent shortened back to the
// source: each stretch begins a run copied byte for byte, at out in the
// result and src in the source. nil is the identity.
type offsetMap []stretch

type stretch struct{ out, src int }

// src is where byte k of the result comes from; for the result's length
// it is the source's. A span [i, j) of the result is source[m.src(i):
// m.src(j)], with the marks dropped after its last letter.
func (m offsetMap) src(k int) int {
	if m == nil {
		return k
	}
	i := sort.Search(len(m), func(i int) bool { return m[i].out > k }) - 1
	return m[i].src + k - m[i].out
}

// unaccentAt is unaccent, and with at set also the map of the result's
// offsets back to text (nil when nothing changed). The map holds a
// stretch per change, not an offset per byte: in a long note with a few
// accents it stays small.
func unaccentAt(text []byte, at bool) ([]byte, offsetMap) {
	var bases *baseTable
	var out []byte // nil until the first change
	var m offsetMap
	letter := false // the last code point kept is a Latin or Greek letter
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			j := i + 1
			for j < len(text) && text[j] < utf8.RuneSelf {
				j++
			}
			if out != nil {
				out = append(out, text[i:j]...)
			}
			c := text[j-1] | 0x20
			letter = 'a' <= c && c <= 'z'
			i = j
			continue
		}
		r, n := utf8.DecodeRune(text[i:])
		drop := r >= 0x300 && r <= 0x36F && letter
		to := rune(0)
		if !drop && (r != utf8.RuneError || n > 1) {
			if bases == nil {
				bases = accentBases()
			}
			to = bases.of(r)
			l := r
			if to != 0 {
				l = to
			}
			letter = unicode.In(l, unicode.Latin, unicode.Greek) && unicode.IsLetter(l)
		} else if !drop {
			letter = false
		}
		if !drop && to == 0 {
			if out != nil {
				out = append(out, text[i:i+n]...)
			}
			i += n
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(text)), text[:i]...)
			if at {
				m = offsetMap{{0, 0}}
			}
		}
		if !drop {
			out = utf8.AppendRune(out, to)
		}
		i += n
		if at {
			m = append(m, stretch{len(out), i})
		}
	}
	if out == nil {
		return text, nil
	}
	return out, m
}

// baseTable maps each code point of U+00C0–U+03FF and U+1E00–U+1FFF to
// the letter it is without its accents (0: itself).
type baseTable struct {
	low [0x400 - 0xC0]rune
	ext [0x2000 - 0x1E00]rune
}

func (t *baseTable) of(r rune) rune {
	switch {
	case r >= 0xC0 && r < 0x400:
		return t.low[r-0xC0]
	case r >= 0x1E00 && r < 0x2000:
		return t.ext[r-0x1E00]
	}
	return 0
}

// accentBases is built once, on first use, from Unicode's canonical
// decompositions (not at start-up: most commands never analyse text).
var accentBases = sync.OnceValue(func() *baseTable {
	t := new(baseTable)
	set := func(r rune, to *rune) {
		switch r {
		case 'ς':
			*to = 'σ'
			return
		case 'İ':
			*to = 'i' // its lower case (bleve's lower-casing garbles it; see fold)
			return
		}
		d := []rune(norm.NFD.String(string(r)))
		if len(d) < 2 || !unicode.In(d[0], unicode.Latin, unicode.Greek) || !unicode.IsLetter(d[0]) {
			return
		}
		for _, m := range d[1:] {
			if !unicode.Is(unicode.Mn, m) {
				return
			}
		}
		*to = d[0]
	}
	for i := range t.low {
		set(rune(0xC0+i), &t.low[i])
	}
	for i := range t.ext {
		set(rune(0x1E00+i), &t.ext[i])
	}
	return t
})
