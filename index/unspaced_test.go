package index

import (
	"math/rand/v2"
	"testing"
	"unicode"
	"unicode/utf8"

	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
)

// TestMayBeUnspaced holds the byte scan to isUnspaced on every code point.
func TestMayBeUnspaced(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if isUnspaced(r) && !mayBeUnspaced(utf8.AppendRune(nil, r)) {
			t.Fatalf("mayBeUnspaced misses %U", r)
		}
	}
}

func TestWithUnspaced(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string // the tokens' terms, in order
	}{
		{"สวัสดีครับ", []string{"สวัสดีครับ"}},
		{"abc สวัสดี def", []string{"abc", "สวัสดี", "def"}},
		{"ครับ๑๒๓", []string{"ครับ", "๑๒๓"}}, // Thai digits are the word tokenizer's
		{"日本 ສະບາຍດີ 한국어", []string{"日", "本", "ສະບາຍດີ", "한국어"}},
		{"ខ្ញុំ, မင်္ဂလာ.", []string{"ខ្ញុំ", "မင်္ဂလာ"}},
		{"ព្រះរាជាណាចក្រ។ប្រជាជន", []string{"ព្រះរាជាណាចក្រ", "ប្រជាជន"}}, // the Khmer full stop ends a run
		{"𑜀𑜁𑜂", []string{"𑜀𑜁𑜂"}},                                          // Ahom
		{"plain words", []string{"plain", "words"}},
		{"", nil},
	} {
		got := withUnspaced([]byte(c.in), unicodetok.NewUnicodeTokenizer().Tokenize([]byte(c.in)))
		var terms []string
		for i, tk := range got {
			terms = append(terms, string(tk.Term))
			if tk.Position != i+1 || string(tk.Term) != c.in[tk.Start:tk.End] {
				t.Errorf("%q: token %d is %q@%d at %d–%d", c.in, i, tk.Term, tk.Position, tk.Start, tk.End)
			}
		}
		if len(terms) != len(c.want) {
			t.Errorf("%q: tokens %q, want %q", c.in, terms, c.want)
			continue
		}
		for i := range terms {
			if terms[i] != c.want[i] {
				t.Errorf("%q: tokens %q, want %q", c.in, terms, c.want)
				break
			}
		}
	}
}

func TestWithUnspacedRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", " ", "ก", "่", "า", "๑", "ສ", "ຸ", "ខ", "្", "မ", "်", "ᨠ", "ꪀ", "中", "한", ".", "1", "\xff", "é", "\u0e4f"}
	for range 20000 {
		var b []byte
		for range r.IntN(16) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		checkUnspaced(t, b)
	}
}

func FuzzUnspaced(f *testing.F) {
	for _, s := range []string{"สวัสดีครับ", "ครับ๑๒๓ abc", "ខ្ញុំ, မင်္ဂလာ.", "\xffก"} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkUnspaced)
}

// checkUnspaced holds withUnspaced to keeping every token of the word
// tokenizer, in order, and to covering every unspaced letter of b.
func checkUnspaced(t *testing.T, b []byte) {
	ts := unicodetok.NewUnicodeTokenizer().Tokenize(b)
	orig := make([][2]int, len(ts))
	for i, tk := range ts {
		orig[i] = [2]int{tk.Start, tk.End}
	}
	got := withUnspaced(b, ts)
	k := 0
	for i, tk := range got {
		if tk.Position != i+1 && len(got) != len(orig) {
			t.Fatalf("%+q: token %d has position %d", b, i, tk.Position)
		}
		if tk.Start < 0 || tk.End > len(b) || tk.Start >= tk.End || string(tk.Term) != string(b[tk.Start:tk.End]) {
			t.Fatalf("%+q: token %q at %d–%d", b, tk.Term, tk.Start, tk.End)
		}
		if i > 0 && tk.Start < got[i-1].End {
			t.Fatalf("%+q: token %d at %d overlaps the one before, ending at %d", b, i, tk.Start, got[i-1].End)
		}
		if k < len(orig) && orig[k] == [2]int{tk.Start, tk.End} {
			k++
		}
	}
	if k != len(orig) {
		t.Fatalf("%+q: %d of the word tokenizer's %d tokens kept", b, k, len(orig))
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if isUnspaced(r) {
			covered := false
			for _, tk := range got {
				covered = covered || tk.Start <= i && i < tk.End
			}
			if !covered {
				t.Fatalf("%+q: %U at %d is in no token", b, r, i)
			}
		}
		i += n
	}
}
