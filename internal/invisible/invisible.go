// Package invisible finds the code points a reader cannot see: Unicode's
// default ignorables, among them the soft hyphen, the zero-width space,
// non-joiner and joiner, the word joiner, a byte order mark inside text,
// the bidirectional controls, variation selectors, the Hangul fillers and
// the tag characters. Text pasted from the web carries them inside words
// ("de\u00adploy" looks like "deploy"), and hidden instructions ride on
// them; search folds them away, so a word is found as it looks, and
// shows none of them in a result.
package invisible

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Is reports whether r is a default-ignorable code point
// (Default_Ignorable_Code_Point of Unicode's DerivedCoreProperties:
// Other_Default_Ignorable_Code_Point, the format characters and the
// variation selectors, less the prepended concatenation marks and the
// interlinear annotation and Egyptian format controls, which are seen).
func Is(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r), unicode.Is(unicode.Variation_Selector, r):
		return true
	case unicode.Is(unicode.Cf, r):
		return !unicode.Is(unicode.Prepended_Concatenation_Mark, r) &&
			!(r >= 0xFFF9 && r <= 0xFFFB) && !(r >= 0x13430 && r <= 0x1343F)
	}
	return false
}

// lead marks the first bytes of the UTF-8 encodings of the code points Is
// holds (U+00AD, U+034F, U+061C, U+115F–U+180F, U+200B–U+206F, U+3164,
// U+FE00–U+FFF8, U+1BCA0–U+1D17A, U+E0000–U+E0FFF), so that most text
// (Hangul syllables, CJK, other scripts' letters) is skipped undecoded.
var lead = [256]bool{0xC2: true, 0xCD: true, 0xD8: true, 0xE1: true, 0xE2: true, 0xE3: true, 0xEF: true, 0xF0: true, 0xF3: true}

// Index returns the byte offset of the first invisible code point in s,
// or -1.
func Index[T string | []byte](s T) int {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c < utf8.RuneSelf:
			i++
			continue
		case !lead[c]:
			// Step over its continuation bytes, none of which can
			// start a code point (a broken sequence is stepped over
			// only as far as it goes).
			n := seqLen(c)
			k := 1
			for k < n && i+k < len(s) && s[i+k]&0xC0 == 0x80 {
				k++
			}
			i += k
			continue
		}
		r, n := decode(s, i)
		if Is(r) {
			return i
		}
		i += n
	}
	return -1
}

// decode is [utf8.DecodeRune] at s[i], whose first byte is not ASCII,
// for either type.
func decode[T string | []byte](s T, i int) (rune, int) {
	n := seqLen(s[i])
	if n == 1 || i+n > len(s) {
		return utf8.RuneError, 1
	}
	r := rune(s[i]) & (0x7F >> n)
	for k := 1; k < n; k++ {
		c := s[i+k]
		if c&0xC0 != 0x80 {
			return utf8.RuneError, 1
		}
		r = r<<6 | rune(c&0x3F)
	}
	if !utf8.ValidRune(r) || utf8.RuneLen(r) != n {
		return utf8.RuneError, 1
	}
	return r, n
}

// seqLen is the length of the UTF-8 sequence lead byte c starts (1 for a
// byte that starts none: invalid input is stepped over byte by byte).
func seqLen(c byte) int {
	switch {
	case c >= 0xF5:
		return 1
	case c >= 0xF0:
		return 4
	case c >= 0xE0:
		return 3
	case c >= 0xC2:
		return 2
	}
	return 1
}

// Drop returns s without its invisible code points (other bytes, valid
// UTF-8 or not, as they are).
func Drop(s string) string {
	i := Index(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !Is(r) {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// DropShown is Drop for text shown to a person or an agent, but for what
// draws emoji (👩‍💻, ❤️): it keeps one emoji or text presentation
// selector (U+FE0F, U+FE0E) right after a symbol, and a zero-width joiner
// between a symbol (or its selector) and the next symbol. Nothing else
// invisible is kept, so at most two invisible code points follow a
// visible one, and a payload hidden in selectors or tag characters after
// an emoji is dropped with the rest.
func DropShown(s string) string {
	i := Index(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	const (
		other    = iota
		symbol   // the last code point written is a symbol
		selected // ... a presentation selector after a symbol
	)
	state := other
	if prev, _ := utf8.DecodeLastRuneInString(s[:i]); isSymbol(prev) {
		state = symbol
	}
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		keep := false
		switch {
		case !Is(r):
			keep, state = true, other
			if isSymbol(r) {
				state = symbol
			}
		case (r == '\ufe0f' || r == '\ufe0e') && state == symbol:
			keep, state = true, selected
		case r == '\u200d' && state != other && i+n < len(s):
			if next, _ := utf8.DecodeRuneInString(s[i+n:]); isSymbol(next) && next != utf8.RuneError {
				keep, state = true, other
			}
		}
		if keep {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func isSymbol(r rune) bool { return unicode.In(r, unicode.So, unicode.Sk) }
