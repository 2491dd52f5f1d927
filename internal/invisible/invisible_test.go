package invisible

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestIs(t *testing.T) {
	tests := []struct {
		r    rune
		want bool
	}{
		{'a', false}, {' ', false}, {'\t', false}, {'한', false}, {'—', false}, {'👩', false},
		{'\u00ad', true},  // soft hyphen
		{'\u034f', true},  // combining grapheme joiner
		{'\u061c', true},  // Arabic letter mark
		{'\u0600', false}, // Arabic number sign: a prepended concatenation mark, seen
		{'\u115f', true},  // Hangul choseong filler
		{'\u3164', true},  // Hangul filler
		{'\u180e', true},  // Mongolian vowel separator
		{'\u200b', true}, {'\u200c', true}, {'\u200d', true}, {'\u200e', true}, {'\u202e', true},
		{'\u2060', true}, {'\u2066', true},
		{'\ufe0f', true}, {'\ufeff', true}, {'\uffa0', true},
		{'\ufff9', false}, // interlinear annotation anchor
		{0x1bca0, true}, {0x1d173, true},
		{0xe0001, true}, {0xe0041, true}, {0xe0100, true},
		{0x13430, false},
	}
	for _, tt := range tests {
		if got := Is(tt.r); got != tt.want {
			t.Errorf("Is(%U) = %v, want %v", tt.r, got, tt.want)
		}
	}
}

// TestLead: every code point Is holds starts with a byte lead marks, so
// Index skips no invisible one.
func TestLead(t *testing.T) {
	var buf [utf8.UTFMax]byte
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !Is(r) {
			continue
		}
		utf8.EncodeRune(buf[:], r)
		if !lead[buf[0]] {
			t.Fatalf("%U starts with %#x, not in lead", r, buf[0])
		}
	}
}

func TestDrop(t *testing.T) {
	tests := []struct{ in, drop, shown string }{
		{"", "", ""},
		{"plain text", "plain text", "plain text"},
		{"de\u00adploy", "deploy", "deploy"},
		{"back\u200bup \ufeffnow", "backup now", "backup now"},
		{"배\u200b포 기\u2060록", "배포 기록", "배포 기록"},
		{"\u3164hidden \uffa0", "hidden ", "hidden "},
		{"tag \U000E0041\U000E0042 smuggled", "tag  smuggled", "tag  smuggled"},
		{"coder 👩\u200d💻 here", "coder 👩💻 here", "coder 👩\u200d💻 here"},
		{"love ❤\ufe0f\u200d🔥", "love ❤🔥", "love ❤\ufe0f\u200d🔥"},
		{"😀\ufe00\ufe01\U000E0100\U000E0101 done", "😀 done", "😀 done"}, // a payload in selectors
		{"😀\ufe0f\ufe0f\ufe0f", "😀", "😀\ufe0f"},
		{"👩\u200d\u200d💻", "👩💻", "👩\u200d💻"},
		{"👩\u200d", "👩", "👩"},
		{"👩\u200da", "👩a", "👩a"},
		{"😀\U000E0041x", "😀x", "😀x"},
		{"a\u200db", "ab", "ab"}, // a joiner between letters is dropped
		{"1\ufe0f\u20e3", "1\u20e3", "1\u20e3"},
		{"\u202eevil\u202c", "evil", "evil"},
		{"bad \xff\u00adbyte\xfe", "bad \xffbyte\xfe", "bad \xffbyte\xfe"},
	}
	for _, tt := range tests {
		if got := Drop(tt.in); got != tt.drop {
			t.Errorf("Drop(%+q) = %+q, want %+q", tt.in, got, tt.drop)
		}
		if got := DropShown(tt.in); got != tt.shown {
			t.Errorf("DropShown(%+q) = %+q, want %+q", tt.in, got, tt.shown)
		}
		if (Index(tt.in) >= 0) != (Drop(tt.in) != tt.in) {
			t.Errorf("Index(%+q) = %d, but Drop changes %v", tt.in, Index(tt.in), Drop(tt.in) != tt.in)
		}
		if Index(tt.in) != Index([]byte(tt.in)) {
			t.Errorf("Index differs for string and bytes of %+q", tt.in)
		}
	}
}

// FuzzIndex holds Index to a plain decoding loop, for any bytes.
func FuzzIndex(f *testing.F) {
	for _, s := range []string{"", "abc", "de\u00adploy", "배포\u200b", "\xff\xfe", "\xe2\x80", "\xf3\xa0\x80\x81x", "\xed\xa0\x80"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want := -1
		for i := 0; i < len(b); {
			r, n := utf8.DecodeRune(b[i:])
			if Is(r) && r != utf8.RuneError {
				want = i
				break
			}
			i += n
		}
		if got := Index(b); got != want {
			t.Fatalf("Index(%+q) = %d, want %d", b, got, want)
		}
	})
}

// BenchmarkIndex scans English and Korean text holding no invisible code
// point, the common case, which every text field of every note pays.
func BenchmarkIndex(b *testing.B) {
	text := []byte(strings.Repeat("The deploy to staging failed at 2 a.m. — 배포가 실패했다, 원인은 설정이다. ", 2000))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if Index(text) >= 0 {
			b.Fatal("found one")
		}
	}
}
