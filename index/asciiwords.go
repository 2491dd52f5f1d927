package index

import (
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
)

// words is what the Unicode tokenizer tok (bleve's, UAX #29 word
// boundaries) makes of input, with the ASCII stretches of the text found
// by asciiWords instead: a profile of a rebuild put bleve's general
// segmenter at 7 % of the CPU, and most text, Korean notes' too, is
// largely ASCII.
//
// The text is cut at ASCII white space, where UAX #29 always ends a word.
// A piece with a non-ASCII byte goes to tok, with the piece before it
// when it starts with one: a combining mark or joiner right after a space
// belongs with the space, so the space's context is kept. TestWords,
// TestWordsRandom and FuzzWords hold the result to tok's on the whole
// text. ascii reports whether input is ASCII only.
func words(tok analysis.Tokenizer, input []byte) (ts analysis.TokenStream, ascii bool) {
	if !utf8.Valid(input) {
		// bleve's segmenter stops early at some invalid bytes; the
		// indexed text never has them (markdown.Parse replaces them).
		return tok.Tokenize(input), false
	}
	rv := make(analysis.TokenStream, 0, len(input)/6+1)
	var slab []analysis.Token
	pos := 0 // the last position given
	fast := func(from, to int) {
		rv = asciiWords(input[:to], from, pos, rv, &slab)
		if len(rv) > 0 {
			pos = rv[len(rv)-1].Position
		}
	}
	slow := func(from, to int) {
		for _, t := range tok.Tokenize(input[from:to]) {
			t.Start += from
			t.End += from
			t.Position += pos
			rv = append(rv, t)
		}
		if len(rv) > 0 {
			pos = rv[len(rv)-1].Position
		}
	}
	// The text from done on is not tokenized yet: ASCII when from < 0,
	// else for tok from from on. last is where the last piece starts when
	// it is ASCII.
	done, from, last := 0, -1, -1
	ascii = true
	for i := 0; i < len(input); {
		if isSpaceByte(input[i]) {
			i++
			continue
		}
		start, piece := i, true // piece: ASCII only
		for i < len(input) && !isSpaceByte(input[i]) {
			piece = piece && input[i] < 0x80
			i++
		}
		ascii = ascii && piece
		switch {
		case piece && from >= 0:
			slow(from, start)
			done, from = start, -1
		case !piece && from < 0:
			from = start
			if input[start] >= 0x80 && last >= 0 {
				from = last // with the piece before, for its context
			}
			fast(done, from)
		}
		last = -1
		if piece {
			last = start
		}
	}
	if from >= 0 {
		slow(from, len(input))
	} else {
		fast(done, len(input))
	}
	return rv, ascii
}

// asciiWords appends to rv the words of input[start:], which must be
// ASCII only, numbered from pos+1: what bleve's Unicode tokenizer makes of
// it, found without its general segmenter. The tokens are taken from
// *slab, which is refilled when full.
//
// For ASCII the rules come down to: a word is a run of letters, digits
// and underscores, which also goes on across one of : . ' between two
// letters (can't, a:b, and "e.g" of "e.g.") or one of , ; . ' between two
// digits (3.14, 1,000). A word with digits and no letter (1_000) is Numeric, any
// other AlphaNumeric.
func asciiWords(input []byte, start, pos int, rv analysis.TokenStream, slab *[]analysis.Token) analysis.TokenStream {
	for i := start; i < len(input); {
		if !isWordByte(input[i]) {
			i++
			continue
		}
		begin, letter, digit := i, false, false
		for i < len(input) {
			c := input[i]
			switch {
			case isWordByte(c):
				letter = letter || isLetterByte(c)
				digit = digit || isDigitByte(c)
				i++
				continue
			case i+1 < len(input) && i > begin:
				prev, next := input[i-1], input[i+1]
				if isLetterByte(prev) && isLetterByte(next) && (c == ':' || c == '.' || c == '\'') ||
					isDigitByte(prev) && isDigitByte(next) && (c == ',' || c == ';' || c == '.' || c == '\'') {
					i++
					continue
				}
			}
			break
		}
		if len(*slab) == cap(*slab) {
			*slab = make([]analysis.Token, 0, min(max((len(input)-i)/6, 16), 1024))
		}
		typ := analysis.AlphaNumeric
		if digit && !letter {
			typ = analysis.Numeric
		}
		pos++
		*slab = append(*slab, analysis.Token{Term: input[begin:i], Start: begin, End: i, Position: pos, Type: typ})
		rv = append(rv, &(*slab)[len(*slab)-1])
	}
	return rv
}

func isLetterByte(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigitByte(c byte) bool  { return '0' <= c && c <= '9' }
func isWordByte(c byte) bool   { return isLetterByte(c) || isDigitByte(c) || c == '_' }

// isSpaceByte reports whether c is ASCII white space that ends a word.
func isSpaceByte(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isASCII reports whether s is ASCII only.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
