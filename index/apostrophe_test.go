package index

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
)

func TestApostropheFilter(t *testing.T) {
	tok := func(term string, start, pos int) *analysis.Token {
		return &analysis.Token{Term: []byte(term), Start: start, End: start + len(term), Position: pos, Type: analysis.AlphaNumeric}
	}
	for _, c := range []struct {
		name string
		in   analysis.TokenStream
		want string // term@start-end#position ...
	}{
		{"no apostrophe", analysis.TokenStream{tok("plain", 0, 1), tok("words", 6, 2)}, "plain@0-5#1 words@6-11#2"},
		{"elided article", analysis.TokenStream{tok("l'équipe", 0, 1), tok("a", 10, 2)}, "l@0-1#1 équipe@2-9#2 a@10-11#3"},
		{"two apostrophes", analysis.TokenStream{tok("rock'n'roll", 4, 3)}, "rock@4-8#3 n@9-10#4 roll@11-15#5"},
		{"trailing and doubled", analysis.TokenStream{tok("dogs'", 0, 1), tok("a''b", 6, 2)}, "dogs@0-4#1 a@6-7#2 b@9-10#3"},
		{"only apostrophes", analysis.TokenStream{tok("''", 0, 1), tok("x", 3, 2)}, "x@3-4#2"},
		{"a term shorter than its text keeps the token's offsets", analysis.TokenStream{{Term: []byte("i'de"), Start: 0, End: 5, Position: 1}}, "i@0-5#1 de@0-5#2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			for i, tk := range (apostropheFilter{}).Filter(c.in) {
				if i > 0 {
					b.WriteByte(' ')
				}
				fmt.Fprintf(&b, "%s@%d-%d#%d", tk.Term, tk.Start, tk.End, tk.Position)
			}
			if b.String() != c.want {
				t.Errorf("got  %s\nwant %s", b.String(), c.want)
			}
		})
	}
}
