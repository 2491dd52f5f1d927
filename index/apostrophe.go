package index

import (
	"bytes"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
)

// apostropheFilterName splits a word at its apostrophes: "l'équipe" is
// the words "l" and "équipe", "dell'ufficio" "dell" and "ufficio",
// "İzmir'de" "izmir" and "de". French, Italian and Catalan elide an
// article into the next word, and Turkish writes a proper noun's suffix
// after an apostrophe; the word people search for is the other part, and
// UAX #29 keeps the whole as one word, so "equipe", "ufficio" and "izmir"
// found nothing. SQLite FTS5's default tokenizer splits there too. It
// runs after the English possessive and stop words ("Ada's" is "ada",
// "don't" a stop word, as before) and before the accents and the stemmer,
// on the apostrophe fold made of ’. The parts are words of their own, at
// positions of their own, on both sides of a search.
const apostropheFilterName = "nexus_apostrophe"

func init() {
	registry.RegisterTokenFilter(apostropheFilterName, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return apostropheFilter{}, nil
	})
}

type apostropheFilter struct{}

func (apostropheFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	split := -1 // the first token to split
	for i, t := range in {
		if bytes.IndexByte(t.Term, '\'') >= 0 {
			split = i
			break
		}
	}
	if split < 0 {
		return in
	}
	out := make(analysis.TokenStream, 0, len(in)+4)
	out = append(out, in[:split]...)
	shift := 0 // positions added by the parts so far
	for _, t := range in[split:] {
		t.Position += shift
		if bytes.IndexByte(t.Term, '\'') < 0 {
			out = append(out, t)
			continue
		}
		// Offsets follow the term where it is as long as its text.
		exact := len(t.Term) == t.End-t.Start
		n := 0
		for from := 0; from < len(t.Term); {
			to := bytes.IndexByte(t.Term[from:], '\'')
			if to < 0 {
				to = len(t.Term)
			} else {
				to += from
			}
			if to > from {
				p := &analysis.Token{Term: t.Term[from:to:to], Start: t.Start, End: t.End, Position: t.Position + n, Type: t.Type, KeyWord: t.KeyWord}
				if exact {
					p.Start, p.End = t.Start+from, t.Start+to
				}
				out = append(out, p)
				n++
			}
			from = to + 1
		}
		if n == 0 {
			continue // only apostrophes: no word
		}
		shift += n - 1
	}
	return out
}
