package agents

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseEntries(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"blank", " \n\n\t", nil},
		{"one", "hello", []string{"hello"}},
		{"two", "a\n§\nb", []string{"a", "b"}},
		{"trailing newline", "a\n§\nb\n", []string{"a", "b"}},
		{"crlf", "a\r\n§\r\nb\r\n", []string{"a", "b"}},
		{"crlf inside entry", "line 1\r\nline 2\r\n§\r\nb", []string{"line 1\nline 2", "b"}},
		{"multi-line entry", "first\nsecond line\n§\nthird", []string{"first\nsecond line", "third"}},
		{"section sign inside a line", "see § 4.2 of the contract\n§\nb §", []string{"see § 4.2 of the contract", "b §"}},
		{"trims entries", "  a  \n§\n\n  b\n\n", []string{"a", "b"}},
		{"drops empty entries", "§\n§\na\n§\n\n§\n", []string{"a"}},
		{"separator with blanks", "a\n  § \nb", []string{"a", "b"}},
		{"keeps duplicates", "a\n§\na", []string{"a", "a"}},
		{"korean", "사용자는 간결한 답을 선호한다\n§\n서버 포트 2222", []string{"사용자는 간결한 답을 선호한다", "서버 포트 2222"}},
		{"double section is text", "a\n§§\nb", []string{"a\n§§\nb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseEntries([]byte(tt.in))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ParseEntries(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFormatEntriesIsHermesBytes(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a\n§\nb"},
		{[]string{"x\ny", "z"}, "x\ny\n§\nz"},
	}
	for _, tt := range tests {
		if got := string(FormatEntries(tt.in)); got != tt.want {
			t.Errorf("FormatEntries(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCharCountCodePoints(t *testing.T) {
	tests := []struct {
		in   []string
		want int
	}{
		{nil, 0},
		{[]string{"abc"}, 3},
		{[]string{"a", "b"}, 5},            // separator counts 3
		{[]string{"한국어"}, 3},               // one per syllable, not 9 bytes
		{[]string{"café", "naïve"}, 12},    // 4 + 3 + 5
		{[]string{"🚀🚀", "ok"}, 7},          // emoji are one code point each
		{[]string{"e\u0301"}, 2},           // a combining accent is its own code point
		{[]string{"a", "b", "c", "d"}, 13}, // 4 + 3*3
	}
	for _, tt := range tests {
		if got := CharCount(tt.in); got != tt.want {
			t.Errorf("CharCount(%q) = %d, want %d", tt.in, got, tt.want)
		}
		if len(tt.in) > 0 {
			if want := utf8.RuneCount(FormatEntries(tt.in)); CharCount(tt.in) != want {
				t.Errorf("CharCount(%q) = %d, disagrees with the formatted file's %d code points", tt.in, CharCount(tt.in), want)
			}
		}
	}
}

func TestFormatUsage(t *testing.T) {
	tests := []struct {
		chars, limit int
		want         string
	}{
		{1474, 2200, "67% — 1,474/2,200 chars"},
		{1099, 2200, "49% — 1,099/2,200 chars"},
		{0, 2200, "0% — 0/2,200 chars"},
		{2200, 2200, "100% — 2,200/2,200 chars"},
		{2199, 2200, "99% — 2,199/2,200 chars"},
		{1375, 1375, "100% — 1,375/1,375 chars"},
		{3000, 2200, "100% — 3,000/2,200 chars"},
		{29, 100, "29% — 29/100 chars"},
		{1234567, 10000000, "12% — 1,234,567/10,000,000 chars"},
		{999, 1000, "99% — 999/1,000 chars"},
	}
	for _, tt := range tests {
		if got := FormatUsage(tt.chars, tt.limit); got != tt.want {
			t.Errorf("FormatUsage(%d, %d) = %q, want %q", tt.chars, tt.limit, got, tt.want)
		}
	}
}

// FuzzParseFormat checks that what ParseEntries reads, FormatEntries writes
// back so that it reads the same again, and that the rewrite is a fixed
// point: parse(format(parse(x))) == parse(x) and format is stable after one
// round.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"", "a", "a\n§\nb", "a\r\n§\r\nb\r\n", "§", "\n§\n", "x § y\n§\n\n§\nz", "한국어\n§\n🚀", " § \n a \n§", "a\n§§\nb", "\r\n\r\n§\r", "a\rb\n§\nc"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries := ParseEntries(data)
		for _, e := range entries {
			if e == "" || e != strings.TrimSpace(e) {
				t.Fatalf("entry %q is empty or untrimmed", e)
			}
			for _, line := range strings.Split(e, "\n") {
				if isSeparatorLine(line) {
					t.Fatalf("entry %q holds a separator line", e)
				}
			}
		}
		out := FormatEntries(entries)
		again := ParseEntries(out)
		if !slices.Equal(entries, again) {
			t.Fatalf("round trip changed entries:\n in  %q\n got %q", entries, again)
		}
		if out2 := FormatEntries(again); string(out2) != string(out) {
			t.Fatalf("format is not stable: %q then %q", out, out2)
		}
		if CharCount(entries) != utf8.RuneCount(out) {
			t.Fatalf("CharCount %d != code points of the file %d", CharCount(entries), utf8.RuneCount(out))
		}
	})
}
