package index

import (
	"math/rand/v2"
	"strings"
	"testing"
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
func TestTokenizeFolded(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "Z", "9", " ", ".", "'", ",", "가", "나다", "é", "中", "カ", "\n", "-", "\u3000", "👍", "\xff", "e\u0301", "\u0301", "\u1100\u1161", norm.NFD.String("배포"), "\u1161", "Å", "힣", "\u11a8", "\ud7a4", "。", "\u0f43", "\u0f43\u0f7a", "\u0958", "\u0f42\u0fb7", "\u0fb9", "\u2019", "'", "ﬁ", "oﬃce", "ﬆ", "\ufb1d"}
	hidden := []string{"\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u202e", "\ufe0f", "\U000E0041", "\u3164", "\u180e"}
	// First the texts that once broke folding: a Tibetan letter that NFC
	// decomposes, at the very start (norm.Iter gave its output before
	// moving on in the source).
	fixed := []string{"\u0f43x", "\u0f43\u0f7a", "\u0958한", "# \u0f43\u0f7a\n\nbody word\n"}
	for n := range 20000 + len(fixed) {
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
	tok := crossTokenizer{unicodetok.NewUnicodeTokenizer()}
	if text, _, _ := fold(b); !needsFold(b) && string(text) != string(b) {
		t.Fatalf("%+q: needsFold says no, fold makes %+q", b, text)
	}
	got := tok.Tokenize(b)
	unnormal := typography.Replace(invisible.Drop(string(b)))
	folded := unnormal
	if utf8.ValidString(folded) {
		folded = norm.NFC.String(folded)
	}
	want := tok.Tokenize([]byte(folded))
	if len(got) != len(want) {
		t.Fatalf("%+q: %d tokens, %d folded", b, len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		if string(g.Term) != string(w.Term) || g.Position != w.Position || g.Type != w.Type {
			t.Fatalf("%+q: token %d is %+q@%d (%v), want %+q@%d (%v)", b, i, g.Term, g.Position, g.Type, w.Term, w.Position, w.Type)
		}
		if g.Type == analysis.Double {
			continue // a Hangul bigram across spaces spans them
		}
		if g.Start < 0 || g.Start >= g.End || g.End > len(b) {
			t.Fatalf("%+q: token %+q at %d–%d", b, g.Term, g.Start, g.End)
		}
		// The span is the word's source: exactly, unless NFC changed
		// a character at its edge, whose source (a base and its
		// marks) the span then takes whole.
		span := typography.Replace(invisible.Drop(string(b[g.Start:g.End])))
		if utf8.ValidString(folded) {
			span = norm.NFC.String(span)
		}
		if span != string(g.Term) && (!strings.Contains(span, string(g.Term)) || norm.NFC.IsNormalString(unnormal)) {
			t.Fatalf("%+q: token %+q spans %+q", b, g.Term, b[g.Start:g.End])
		}
	}
}

// FuzzFold is TestTokenizeFolded on any text.
func FuzzFold(f *testing.F) {
	for _, s := range []string{"de\u00adploy", norm.NFD.String("배포 café"), "\u0f43\u0f7a", "e\u200b\u0301", "\u0958한", "\xff\u0301", "wasn\u2019t O\u2019Brien"} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkFolded)
}
