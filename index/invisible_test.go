package index

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/internal/invisible"
)

// TestTokenizeFolded: text with invisible code points, typographic
// apostrophes or decomposed characters gives the tokens of the same text
// without them, with ' and in NFC
// (terms, positions, types), each token's offsets spanning its word in
// the text as given.
// soakFactor multiplies the iterations of the longest randomised loops:
// 1 in a plain test run, 10 with -tags soak.
var soakFactor = 1

func TestTokenizeFolded(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "Z", "9", " ", ".", "'", ",", "가", "나다", "é", "中", "カ", "\n", "-", "\u3000", "👍", "\xff", "e\u0301", "\u0301", "\u1100\u1161", norm.NFD.String("배포"), "\u1161", "Å", "힣", "\u11a8", "\ud7a4", "。", "\u0f43", "\u0f43\u0f7a", "\u0958", "\u0f42\u0fb7", "\u0fb9", "\u2019", "'", "ﬁ", "oﬃce", "ﬆ", "\ufb1d", "İ", "I\u0307", "ẞ", "\u2c62", "\u0307"}
	hidden := []string{"\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u202e", "\ufe0f", "\U000E0041", "\u3164", "\u180e"}
	// First the texts that once broke folding: a Tibetan letter that NFC
	// decomposes, at the very start (norm.Iter gave its output before
	// moving on in the source), and CJK characters that did not pair up
	// across a dropped character or paired across a lengthened one (the
	// offsets were mapped back before the filters ran).
	fixed := []string{"\u0f43x", "\u0f43\u0f7a", "\u0958한", "# \u0f43\u0f7a\n\nbody word\n", "中\u200b国", "\ufa6c 中"}
	for n := range 2000*soakFactor + len(fixed) {
		var b []byte
		if n < len(fixed) {
			b = []byte(fixed[n])
		} else {
			for range r.IntN(30) {
				if r.IntN(5) == 0 {
					b = append(b, hidden[r.IntN(len(hidden))]...)
				} else {
					b = append(b, pieces[r.IntN(len(pieces))]...)
				}
			}
		}
		checkFolded(t, b)
	}
}

// typography is what fold makes of apostrophes and ligatures, written out.
var typography = strings.NewReplacer("\u2019", "'", "ﬀ", "ff", "ﬁ", "fi", "ﬂ", "fl", "ﬃ", "ffi", "ﬄ", "ffl", "ﬅ", "st", "ﬆ", "st")

// checkFolded holds the tokens of b to those of b folded.
func checkFolded(t *testing.T, b []byte) {
	unnormal := typography.Replace(invisible.Drop(replaceInvalid(b)))
	folded := norm.NFC.String(shrunk(norm.NFC.String(unnormal)))
	text, start, end := fold(b)
	if string(text) != folded {
		t.Fatalf("%+q: fold makes %+q, want %+q", b, text, folded)
	}
	if !needsFold(b) && folded != string(b) {
		t.Fatalf("%+q: needsFold says no, but folded it is %+q", b, folded)
	}
	if len(start) != len(text) || len(end) != len(text) {
		t.Fatalf("%+q: %d bytes folded, %d starts, %d ends", b, len(text), len(start), len(end))
	}
	// The tokenizer and the whole analyzer see the folded text: the same
	// tokens, offsets included.
	tok := crossTokenizer{unicodetok.NewUnicodeTokenizer()}
	an := queryMapping().AnalyzerNamed(analyzerName)
	for _, c := range []struct {
		name string
		f    func([]byte) analysis.TokenStream
	}{{"tokenizer", tok.Tokenize}, {"analyzer", an.Analyze}} {
		got, want := c.f(bytes.Clone(b)), c.f([]byte(folded))
		if len(got) != len(want) {
			t.Fatalf("%+q: the %s makes %d tokens, %d of the folded text", b, c.name, len(got), len(want))
		}
		for i, g := range got {
			w := want[i]
			if string(g.Term) != string(w.Term) || g.Position != w.Position || g.Type != w.Type || g.Start != w.Start || g.End != w.End {
				t.Fatalf("%+q: the %s's token %d is %+q@%d %d–%d (%v), folded %+q@%d %d–%d (%v)", b, c.name, i, g.Term, g.Position, g.Start, g.End, g.Type, w.Term, w.Position, w.Start, w.End, w.Type)
			}
			if g.Start < 0 || g.Start >= g.End || g.End > len(text) {
				t.Fatalf("%+q: the %s's token %+q at %d–%d of %d bytes", b, c.name, g.Term, g.Start, g.End, len(text))
			}
			if !utf8.Valid(g.Term) {
				t.Fatalf("%+q: the %s's token %+q is not UTF-8", b, c.name, g.Term)
			}
			s, e := start[g.Start], end[g.End-1]
			if s < 0 || s >= e || e > len(b) {
				t.Fatalf("%+q: the %s's token %+q maps to %d–%d", b, c.name, g.Term, s, e)
			}
			if c.name == "analyzer" || g.Type == analysis.Double {
				continue // stems, and Hangul bigrams across spaces, are no substrings
			}
			// The span is the word's source: exactly, unless NFC changed
			// a character at its edge, whose source (a base and its
			// marks) the span then takes whole.
			span := norm.NFC.String(shrunk(norm.NFC.String(typography.Replace(invisible.Drop(replaceInvalid(b[s:e]))))))
			if span != string(g.Term) && (!strings.Contains(span, string(g.Term)) || norm.NFC.IsNormalString(unnormal)) {
				t.Fatalf("%+q: token %+q spans %+q", b, g.Term, b[s:e])
			}
		}
	}
}

// shrunk is s with each letter whose lower case is shorter in UTF-8
// lower-cased, as fold writes it (after NFC, and then NFC again).
func shrunk(s string) string {
	var b strings.Builder
	for _, r := range s {
		if l := unicode.ToLower(r); utf8.RuneLen(l) < utf8.RuneLen(r) {
			r = l
		}
		b.WriteRune(r)
	}
	return b.String()
}

// replaceInvalid is b with each invalid byte U+FFFD, as fold reads it.
func replaceInvalid(b []byte) string {
	var rs []rune
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		rs = append(rs, r)
		i += n
	}
	return string(rs)
}

// FuzzFold is TestTokenizeFolded on any text.
func FuzzFold(f *testing.F) {
	for _, s := range []string{"de\u00adploy", norm.NFD.String("배포 café"), "\u0f43\u0f7a", "e\u200b\u0301", "\u0958한", "\xff\u0301", "wasn\u2019t O\u2019Brien", "中\u200b国", "\ufa6c 中", "\u0958e\u0301\u11a8\n'ｶ", "I\u0307stanbul Straẞe"} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkFolded)
}

// TestMayShrinkLower holds fold's byte scan to every letter whose lower
// case is shorter in UTF-8.
func TestMayShrinkLower(t *testing.T) {
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if l := unicode.ToLower(r); utf8.RuneLen(l) < utf8.RuneLen(r) && !mayShrinkLower(utf8.AppendRune(nil, r)) {
			t.Fatalf("mayShrinkLower misses %U", r)
		}
	}
}
