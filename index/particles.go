package index

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// koreanSuffixes are the particles (조사) and verb endings that a query
// word may carry and a note may not: 동기화 지역은 should find "동기화
// 지역" and "지역에서", 타임아웃을 늘리는 방법 "타임아웃 늘리기". Longest
// first: one is stripped, the longest that ends the word. The list is in
// docs/search.md ("Korean particles and endings").
var koreanSuffixes = sortedByLength([]string{
	// particles
	"에서는", "에서도", "에게서", "으로는", "으로도", "이라고", "에게는", "한테서",
	"에서", "에게", "한테", "께서", "까지", "부터", "으로", "처럼", "보다", "마다",
	"조차", "밖에", "이나", "이랑", "에는", "와는", "과는", "이라", "라고",
	"을", "를", "은", "는", "이", "가", "의", "에", "와", "과", "도", "만", "로", "랑",
	// endings of 하다 and 되다, and the adnominal endings of any verb
	"합니다", "됩니다", "하는", "하기", "하고", "하면", "하여", "해서", "했다",
	"한다", "하다", "되는", "되어", "되고", "된다", "했던", "하던",
	"한", "된", "할", "던",
})

func sortedByLength(s []string) []string {
	out := append([]string(nil), s...)
	// Stable on length, longest first; the order within a length does
	// not matter, as two suffixes of one length cannot both end a word.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && utf8.RuneCountInString(out[j]) > utf8.RuneCountInString(out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// koreanStem is word without the Korean particle or ending it ends with,
// when the word left is at least two syllables, or two letters or digits
// of another script (a shorter stem would match too much: 국가 is not 국
// with 가; API를 is API); word itself otherwise.
func koreanStem(word string) string {
	last, _ := utf8.DecodeLastRuneInString(word)
	if !unicode.Is(unicode.Hangul, last) {
		return word
	}
	for _, suf := range koreanSuffixes {
		stem, ok := strings.CutSuffix(word, suf)
		if !ok {
			continue
		}
		if wordTail(stem) < 2 {
			continue // a shorter suffix may leave enough: 결과는 is 결과
		}
		return stem
	}
	return word
}

// wordTail counts the letters and digits that end s, of one kind (Hangul,
// or not): the word a suffix is attached to. 시간\uFFFD초 ends in the
// one syllable 초, API in three letters.
func wordTail(s string) int {
	n, hangul := 0, false
	for len(s) > 0 {
		r, size := utf8.DecodeLastRuneInString(s)
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		h := unicode.Is(unicode.Hangul, r)
		if n > 0 && h != hangul {
			break
		}
		n, hangul = n+1, h
		s = s[:len(s)-size]
	}
	return n
}

// koreanStems is words with koreanStem applied to each, and whether any
// changed.
func koreanStems(words []string) ([]string, bool) {
	out := make([]string, len(words))
	changed := false
	for i, w := range words {
		out[i] = koreanStem(w)
		changed = changed || out[i] != w
	}
	return out, changed
}
