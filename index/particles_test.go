package index

import "testing"

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
