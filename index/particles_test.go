package index

import (
	"strings"
	"testing"
)

func TestKoreanStem(t *testing.T) {
	for _, c := range []struct{ word, stem string }{
		{"지역은", "지역"},
		{"번호는", "번호"},
		{"타임아웃을", "타임아웃"},
		{"늘리는", "늘리"},
		{"설정하는", "설정"},
		{"서버에서는", "서버"},
		{"데이터베이스로", "데이터베이스"},
		{"결과는", "결과"},                // 과는 would leave one syllable; 는 does not
		{"API를", "API"},              // a Latin word before the particle
		{"k8s에서", "k8s"},             // letters and digits
		{"국가", "국가"},                 // 가 after one syllable is part of the word
		{"물을", "물을"},                 // one syllable left: kept
		{"결과", "결과"},                 // 과 after one syllable
		{"시간\uFFFD초과", "시간\uFFFD초과"}, // the word before 과 is 초 alone
		{"는", "는"},
		{"deploy", "deploy"},
		{"배포", "배포"},
		{"x를", "x를"}, // one letter left
		// A particle of two forms only in the form that fits the
		// syllable before it (받침): what is left otherwise is a word
		// that ends like a particle.
		{"모델을", "모델"},
		{"데이터를", "데이터"},
		{"모델를", "모델를"},
		{"전문가", "전문가"},     // 가 follows a vowel: 전문 ends in ㄴ
		{"손절가", "손절가"},     // nor ㄹ
		{"게이트웨이", "게이트웨이"}, // 이 follows a consonant: 웨 has none
		{"상대경로", "상대경로"},   // 로 follows a vowel or ㄹ
		{"서울로", "서울"},
		{"에러가", "에러"},
		{"관계없는", "관계없"}, // 는 after a consonant is a verb's ending
		// 도 after two syllables is a word of its own.
		{"정확도", "정확도"},
		{"유사도", "유사도"},
		{"파일도", "파일도"},
		{"데이터도", "데이터"},
		{"API도", "API"},
		{"모바일에서도", "모바일"},
		// A question's endings.
		{"제한하려면", "제한"},
		{"업데이트하나", "업데이트"},
	} {
		if got := koreanStem(c.word); got != c.stem {
			t.Errorf("koreanStem(%q) = %q, want %q", c.word, got, c.stem)
		}
	}
}

func TestKoreanSuffixesLongestFirst(t *testing.T) {
	for i := 1; i < len(koreanSuffixes); i++ {
		if len([]rune(koreanSuffixes[i])) > len([]rune(koreanSuffixes[i-1])) {
			t.Fatalf("%q after the shorter %q", koreanSuffixes[i], koreanSuffixes[i-1])
		}
	}
}

// TestKoreanQuestionWords: the interrogatives of a question and 하다 as
// its verb are left out of the words (""), unless nothing else is left.
func TestKoreanQuestionWords(t *testing.T) {
	for _, c := range []struct{ words, want []string }{
		{[]string{"데이터", "정제", "작업은", "어떻게", "했나"}, []string{"데이터", "정제", "작업", "", ""}},
		{[]string{"무엇을", "저장하나요"}, []string{"", "저장"}},
		{[]string{"어떻게"}, []string{"어떻게"}},
		{[]string{"왜", "어디서"}, []string{"왜", "어디서"}},
	} {
		got, _ := koreanStems(c.words)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("koreanStems(%q) = %q, want %q", c.words, got, c.want)
		}
	}
}
