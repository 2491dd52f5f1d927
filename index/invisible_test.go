package index

import (
	"math/rand/v2"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"

	"github.com/nexus-memory/nexus/internal/invisible"
)

// TestTokenizeInvisible: text with invisible code points gives the tokens
// of the same text without them (terms, positions, types), each token's
// offsets spanning its word in the text as given.
func TestTokenizeInvisible(t *testing.T) {
	tok := crossTokenizer{unicodetok.NewUnicodeTokenizer()}
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "Z", "9", " ", ".", "'", ",", "가", "나다", "é", "中", "カ", "\n", "-", "\u3000", "👍", "\xff"}
	hidden := []string{"\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u202e", "\ufe0f", "\U000E0041", "\u3164", "\u180e"}
	for range 20000 {
		var b []byte
		for range r.IntN(30) {
			if r.IntN(5) == 0 {
				b = append(b, hidden[r.IntN(len(hidden))]...)
			} else {
				b = append(b, pieces[r.IntN(len(pieces))]...)
			}
		}
		got := tok.Tokenize(b)
		want := tok.Tokenize([]byte(invisible.Drop(string(b))))
		if len(got) != len(want) {
			t.Fatalf("%+q: %d tokens, %d without the invisible code points", b, len(got), len(want))
		}
		for i, g := range got {
			w := want[i]
			if string(g.Term) != string(w.Term) || g.Position != w.Position || g.Type != w.Type {
				t.Fatalf("%+q: token %d is %+q@%d (%v), want %+q@%d (%v)", b, i, g.Term, g.Position, g.Type, w.Term, w.Position, w.Type)
			}
			if g.Type == analysis.Double {
				continue // a Hangul bigram across spaces spans them
			}
			if span := invisible.Drop(string(b[g.Start:g.End])); span != string(g.Term) {
				t.Fatalf("%+q: token %+q spans %+q", b, g.Term, b[g.Start:g.End])
			}
		}
	}
}
