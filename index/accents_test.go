package index

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"golang.org/x/text/unicode/norm"
)

func TestUnaccent(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"résumé", "resume"},
		{"müller", "muller"},
		{"naïve", "naive"},
		{"façade", "facade"},
		{"tiếng", "tieng"},
		{"việt", "viet"},
		{"łódź", "łodz"}, // ł is a letter of its own (no decomposition)
		{"ß", "ß"},
		{"øre", "øre"},
		{"αθήνα", "αθηνα"},
		{"οδος", "οδοσ"}, // the final sigma
		{"ὀδυσσεύς", "οδυσσευσ"},
		{"n\u0308", "n"},       // a mark no composed letter holds
		{"1\u0301", "1\u0301"}, // a mark after a digit is kept
		{"\u0301a", "\u0301a"}, // and at the start
		{"й", "й"},             // Cyrillic keeps its breve
		{"が", "が"},             // and kana their dakuten
		{"배포", "배포"},
		{"×÷", "×÷"},
		{"\xffé", "\xffe"},
		{"i̇stanbul", "istanbul"}, // İ lower-cased in full: i and a dot above
		{"İ", "i"},
		{"plain", "plain"},
		{"", ""},
	} {
		if got := string(unaccent([]byte(c.in))); got != c.want {
			t.Errorf("unaccent(%+q) = %+q, want %+q", c.in, got, c.want)
		}
		if !mayHaveAccent([]byte(c.in)) && c.in != c.want {
			t.Errorf("mayHaveAccent(%+q) is false, but unaccent changes it", c.in)
		}
	}
}

func TestUnaccentAt(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a", "é", "e\u0301", "\u0301", " ", "ς", "Ω", "ώ", "ệ", "가", "\xff", "ł", "й", "が", "\u0308\u0301", "1", "ǆ", "ﬁ", "\u1fff", "\u1e9e"}
	for range 20000 {
		var b []byte
		for range r.IntN(12) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		checkUnaccent(t, b)
	}
}

func FuzzUnaccent(f *testing.F) {
	for _, s := range []string{"résumé", "tiếng việt", "οδος", "n\u0308", "\xff\u0301", "1\u0301é"} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkUnaccent)
}

// checkUnaccent holds unaccentAt to unaccent, its map of offsets to b,
// and its result to having no accent left and nothing gained.
func checkUnaccent(t *testing.T, b []byte) {
	out, m := unaccentAt(b, true)
	if string(out) != string(unaccent(b)) {
		t.Fatalf("%+q: unaccentAt makes %+q, unaccent %+q", b, out, unaccent(b))
	}
	if !mayHaveAccent(b) && string(out) != string(b) {
		t.Fatalf("%+q: mayHaveAccent says no, but unaccent makes %+q", b, out)
	}
	if (m == nil) != (string(out) == string(b)) && len(b) > 0 {
		t.Fatalf("%+q: makes %+q, with a map %v", b, out, m)
	}
	if len(out) > len(b) || m.src(len(out)) != len(b) || m.src(0) != 0 {
		t.Fatalf("%+q: %d bytes out; the map %v gives %d for the end", b, len(out), m, m.src(len(out)))
	}
	for k := 1; k <= len(out); k++ {
		if m.src(k) < m.src(k-1) {
			t.Fatalf("%+q: offsets go back at %d: %v", b, k, m)
		}
	}
	if again := unaccent(out); string(again) != string(out) {
		t.Fatalf("%+q: unaccent twice makes %+q, once %+q", b, again, out)
	}
	if utf8.Valid(b) {
		// Each code point kept begins where the map says, and is the
		// source's own or its letter.
		for k := 0; k < len(out); {
			r, n := utf8.DecodeRune(out[k:])
			src, _ := utf8.DecodeRune(b[m.src(k):])
			if r != src && accentBases().of(src) != r {
				t.Fatalf("%+q: %+q at %d comes from %+q", b, r, k, src)
			}
			k += n
		}
		if !utf8.Valid(out) {
			t.Fatalf("%+q: invalid output %+q", b, out)
		}
		// No Latin or Greek letter with an accent is left, composed
		// or as a base and its mark.
		letter := false
		for _, r := range string(out) {
			if r >= 0x300 && r <= 0x36F && letter {
				t.Fatalf("%+q: %+q keeps the mark %+q on a letter", b, out, r)
			}
			letter = unicode.In(r, unicode.Latin, unicode.Greek) && unicode.IsLetter(r)
			if d := []rune(norm.NFD.String(string(r))); letter && len(d) > 1 && unicode.Is(unicode.Mn, d[1]) {
				t.Fatalf("%+q: %+q keeps the accented letter %+q", b, out, r)
			}
		}
	}
}

// BenchmarkAccents is the text analysis of every text field with the
// accent filter and without it (and the scans for accents and unspaced
// scripts alone), on the generated vault's text (English
// and Korean: the filter only scans) and on French and Vietnamese text
// (where it rewrites a word in three or four).
func BenchmarkAccents(b *testing.B) {
	vault := benchVaultText(b)
	accented := []byte(strings.Repeat("Le comité a révisé le budget de l'été et la réunion a été reportée à février. "+
		"Tiếng Việt có sáu thanh điệu và nhiều nguyên âm được viết với dấu.\n\n", 2000))
	m, err := newMapping()
	if err != nil {
		b.Fatal(err)
	}
	var without []any
	for _, f := range []string{cjk.WidthName, lowercase.Name, hangulFilterName, cjk.BigramName, en.PossessiveName, en.StopName, en.SnowballStemmerName} {
		without = append(without, f)
	}
	if err := m.AddCustomAnalyzer("bench_no_accents", map[string]any{"type": custom.Name, "tokenizer": crossTokenizerName, "token_filters": without}); err != nil {
		b.Fatal(err)
	}
	for _, text := range []struct {
		name string
		data []byte
	}{{"vault", vault}, {"accented", accented}} {
		paragraphs := bytes.Split(text.data, []byte("\n\n"))
		// The two scans every text field now pays: for accents (on
		// each term, here on the whole text) and for Thai and the
		// other unspaced scripts.
		b.Run(text.name+"/scans", func(b *testing.B) {
			b.SetBytes(int64(len(text.data)))
			n := 0
			for b.Loop() {
				for _, p := range paragraphs {
					if mayHaveAccent(p) || mayBeUnspaced(p) {
						n++
					}
				}
			}
			b.ReportMetric(float64(n)/float64(b.N), "hits/op")
		})
		for _, an := range []string{analyzerName, "bench_no_accents"} {
			a := m.AnalyzerNamed(an)
			b.Run(text.name+"/"+an, func(b *testing.B) {
				b.SetBytes(int64(len(text.data)))
				b.ReportAllocs()
				for b.Loop() {
					for _, p := range paragraphs {
						a.Analyze(p)
					}
				}
			})
		}
	}
}

// BenchmarkBestWindow is the snippet's search for its window in a 2 MB
// section, plain and with one accented letter (which makes it look in
// the text without accents).
func BenchmarkBestWindow(b *testing.B) {
	plain := strings.Repeat("filler words about nothing in particular. ", 50000) + "the unicorn appears at last"
	terms := map[string]bool{"unicorn": true, "appear": true}
	for _, c := range []struct{ name, text string }{{"plain", plain}, {"one-accent", "café " + plain}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, _, found := bestWindow(c.text, terms); !found {
					b.Fatal("not found")
				}
			}
		})
	}
}

func TestSearchText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Plain ASCII", "plain ascii"},
		{"HAUPTSTRAẞE", "hauptstraße"},
		{"RÉSUMÉ", "resume"},
		{"\u212a = 273 K", "k = 273 k"},
		{"Ⱥ and ẞ", "ⱥ and ß"},
		{"İSTANBUL", "istanbul"},
		{"한국어 Ελλάδα", "한국어 ελλαδα"},
	} {
		if got, _, _ := searchText(c.in); got != c.want {
			t.Errorf("searchText(%+q) = %+q, want %+q", c.in, got, c.want)
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", "Z", "é", "É", "e\u0301", "\u0301", " ", "ẞ", "\u212a", "\u2126", "Ⱥ", "İ", "Σ", "가", "\xff", "ł", "Й"}
	for range 20000 {
		var b []byte
		for range r.IntN(12) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		checkSearchText(t, string(b))
	}
}

func FuzzSearchText(f *testing.F) {
	for _, s := range []string{"HAUPTSTRAẞE", "RÉSUMÉ", "\u212aé", "Ⱥ\u0301", "\xffẞ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkSearchText(t, s) })
}

// checkSearchText holds searchText's maps to s: they map the start and
// end of the text to those of s, never go back, and each code point of
// the text comes from where they say, the source's own lower-cased or its
// letter without accents.
func checkSearchText(t *testing.T, s string) {
	text, lower, accents := searchText(s)
	src := func(k int) int { return lower.src(accents.src(k)) }
	if src(0) != 0 || src(len(text)) != len(s) {
		t.Fatalf("%+q: the maps give %d and %d for the ends of %+q", s, src(0), src(len(text)), text)
	}
	for k := 1; k <= len(text); k++ {
		if src(k) < src(k-1) {
			t.Fatalf("%+q: offsets go back at %d", s, k)
		}
	}
	if !utf8.ValidString(s) {
		return
	}
	for k := 0; k < len(text); {
		r, n := utf8.DecodeRuneInString(text[k:])
		from, _ := utf8.DecodeRuneInString(s[src(k):])
		l := unicode.ToLower(from)
		if r != l && accentBases().of(l) != r {
			t.Fatalf("%+q: %+q at %d of %+q comes from %+q", s, r, k, text, from)
		}
		k += n
	}
}
