package index

import (
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
)

// Thai, Lao, Khmer, Myanmar and the Tai scripts (Tai Le, New Tai Lue,
// Tai Tham, Tai Viet, Ahom) write words without
// spaces between them, and bleve's word tokenizer (UAX #29, which leaves
// them to a dictionary it does not have) makes no token of them at all:
// a note in Thai was not found by any of its words. Without a dictionary
// the index reads them as it reads Chinese and Japanese: each run of
// such letters is a token typed Ideographic, which the CJK bigram filter
// makes into the pairs of adjacent code points, so a word is found
// anywhere inside a run (สวัสดี inside สวัสดีครับ), and a query's run
// must hold all of its pairs.
//
// Only letters and marks make a run: the scripts' punctuation (the Thai
// ๏ and ฯ, the Khmer full stop ។, the Myanmar ။) and symbols end one.
func isUnspaced(r rune) bool {
	if r < 0x0E00 || !unicode.IsLetter(r) && !unicode.IsMark(r) {
		return false
	}
	switch {
	case r >= 0x0E00 && r <= 0x0EFF: // Thai, Lao
		return true
	case r >= 0x1000 && r <= 0x109F: // Myanmar
		return true
	case r >= 0x1780 && r <= 0x17FF, r >= 0x19E0 && r <= 0x19FF: // Khmer, Khmer symbols
		return true
	case r >= 0x1950 && r <= 0x19DF: // Tai Le, New Tai Lue
		return true
	case r >= 0x1A20 && r <= 0x1AAF: // Tai Tham
		return true
	case r >= 0xA9E0 && r <= 0xA9FF, r >= 0xAA60 && r <= 0xAADF: // Myanmar Extended-B and -A, Tai Viet
		return true
	case r >= 0x11700 && r <= 0x1174F: // Ahom
		return true
	}
	return false
}

// mayBeUnspaced reports whether b may hold a code point isUnspaced
// accepts, by the first two bytes of their UTF-8: a byte scan that most
// text, Korean included, passes.
func mayBeUnspaced(b []byte) bool {
	for i := 0; i+1 < len(b); i++ {
		switch c, d := b[i], b[i+1]; c {
		case 0xE0:
			if d >= 0xB8 && d <= 0xBB {
				return true
			}
		case 0xE1:
			if d <= 0x82 || d == 0x9E || d == 0x9F || d >= 0xA5 && d <= 0xAA {
				return true
			}
		case 0xEA:
			if d == 0xA7 || d >= 0xA9 && d <= 0xAB {
				return true
			}
		case 0xF0:
			if d == 0x91 && i+2 < len(b) && (b[i+2] == 0x9C || b[i+2] == 0x9D) {
				return true
			}
		}
	}
	return false
}

// withUnspaced adds to ts (the word tokenizer's tokens of input, in
// order) a token for each run of unspaced letters no token of ts
// covers, in its place, and numbers the positions again. Digits are not
// letters: the word tokenizer makes tokens of them.
func withUnspaced(input []byte, ts analysis.TokenStream) analysis.TokenStream {
	if !mayBeUnspaced(input) {
		return ts
	}
	var out analysis.TokenStream
	next := 0 // the first token of ts not yet in out
	added := false
	// add puts in the stretches of [start, end) that no token of ts
	// covers (a token may reach into a run: a mark extends the word
	// before it).
	add := func(start, end int) {
		for start < end {
			for next < len(ts) && ts[next].End <= start {
				out = append(out, ts[next])
				next++
			}
			if next < len(ts) && ts[next].Start <= start {
				start = ts[next].End
				continue
			}
			stop := end
			if next < len(ts) && ts[next].Start < end {
				stop = ts[next].Start
			}
			out = append(out, &analysis.Token{Term: input[start:stop], Start: start, End: stop, Type: analysis.Ideographic, KeyWord: true})
			added = true
			start = stop
		}
	}
	run := -1
	for i := 0; i < len(input); {
		r, n := utf8.DecodeRune(input[i:])
		if isUnspaced(r) {
			if run < 0 {
				run = i
			}
		} else if run >= 0 {
			add(run, i)
			run = -1
		}
		i += n
	}
	if run >= 0 {
		add(run, len(input))
	}
	if !added {
		return ts
	}
	out = append(out, ts[next:]...)
	for i, t := range out {
		t.Position = i + 1
	}
	return out
}
