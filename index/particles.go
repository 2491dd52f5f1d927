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
	// and of questions asked with them
	"하려면", "하나요", "했나요", "되나요", "하는지", "했는지", "하나", "했나", "되나",
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
		if !fitsStem(stem, suf) {
			continue // 전문가 is not 전문 with 가, nor 게이트웨이 게이트웨 with 이
		}
		if suf == "도" && wordTail(stem) == 2 && lastHangul(stem) {
			// Two syllables and 도 are most often a word of their
			// own (정확도, 유사도, 난이도, 해상도: "degree of"), which a
			// search names far more often than 노트도 ("notes too").
			continue
		}
		return stem
	}
	return word
}

// afterConsonant and afterVowel are the particles of two forms, the one
// said after a syllable ending in a consonant (받침) and the one said
// after a vowel: 책을 and 차를, 책이 and 차가, 책과 and 차와, 책으로 and
// 차로 (and 길로: 로 also follows ㄹ). 는 is not among them: after a
// consonant it is a verb's ending (있는, 받는), stripped as well.
var (
	afterConsonant = map[string]bool{"이": true, "은": true, "을": true, "과": true, "과는": true, "으로": true, "으로는": true, "으로도": true, "이나": true, "이랑": true, "이라": true, "이라고": true}
	afterVowel     = map[string]bool{"가": true, "를": true, "와": true, "와는": true, "랑": true, "라고": true, "로": true}
)

// lastHangul reports whether s ends in a Hangul syllable.
func lastHangul(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.Is(unicode.Hangul, r)
}

// fitsStem reports whether the particle suf may follow stem as Korean
// says it: a particle of two forms only in the form that fits the stem's
// last syllable. A stem ending in another script (API, 19) takes
// either, as its reading is not known.
func fitsStem(stem, suf string) bool {
	last, _ := utf8.DecodeLastRuneInString(stem)
	if last < 0xAC00 || last > 0xD7A3 {
		return true
	}
	final := (last - 0xAC00) % 28 // 0: no final consonant; 8: ㄹ
	switch {
	case afterConsonant[suf]:
		return final != 0
	case afterVowel[suf]:
		return final == 0 || (suf == "로" && final == 8)
	}
	return true
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

// koreanQuestionWords are the Korean interrogatives (how, what, why,
// when, where, who, which, how much), as the stems koreanStem leaves,
// and 하다 or 되다 alone as a question's verb (했나: "did we").
// Like the English stop words how, what and which they say what is asked,
// not what about, and a note seldom holds them: "데이터 정제 작업은
// 어떻게 했나" is about 데이터 정제 작업.
var koreanQuestionWords = map[string]bool{
	"어떻게": true, "어떤": true, "어느": true, "무엇": true, "무슨": true, "뭐": true, "왜": true,
	"언제": true, "어디": true, "어디서": true, "누가": true, "누구": true, "얼마나": true, "몇": true,
	// 하다 and 되다 standing alone as a question's verb: "did", "does it"
	"했나": true, "했나요": true, "하나요": true, "할까": true, "할까요": true, "하려면": true,
	"하는지": true, "했는지": true, "되나": true, "되나요": true, "됐나": true, "되는지": true,
}

// koreanStems is words with koreanStem applied to each, the Korean
// interrogatives as "" (a word of no term, as a stop word is) unless
// every word is one, and whether any changed.
func koreanStems(words []string) ([]string, bool) {
	out := make([]string, len(words))
	changed, asked := false, 0
	for i, w := range words {
		out[i] = koreanStem(w)
		if koreanQuestionWords[out[i]] {
			asked++
		}
	}
	for i, w := range words {
		if asked < len(words) && koreanQuestionWords[out[i]] {
			out[i] = ""
		}
		changed = changed || out[i] != w
	}
	return out, changed
}
