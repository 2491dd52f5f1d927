package index

import (
	"bytes"
	"reflect"
	"sync"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/shingle"
	bindex "github.com/blevesearch/bleve_index_api"
)

// textAnalysis is a rebuild's analysis of the text fields: exactly the
// tokens, terms, counts and locations of the mapping's analyzers (the
// words analyzer, and the body's, which is the same plus word pairs;
// TestAllFieldFromParts and its fuzz target hold every field to what
// bleve makes), with less of the work that a rebuild of a large vault
// spends most of its allocations on:
//
//   - the Snowball stemmer's result is remembered per word (a vault's
//     words repeat: the stemmer ran millions of times on a few thousand);
//   - the width filter is skipped for terms it cannot change (valid
//     UTF-8 with no halfwidth or fullwidth form, whose encodings all
//     begin with the byte 0xEF), instead of copying every term twice;
//   - the body's word pairs are counted as they are formed, into one
//     buffer, instead of made into tokens that are counted afterwards:
//     the body has no term vectors, so a pair's position and offsets
//     are never used;
//   - term counts are kept in slabs rather than one allocation per term.
//
// A textAnalysis is used by one goroutine at a time (see [getTextAnalysis]).
type textAnalysis struct {
	words, body analysis.Analyzer // what it stands in for
	tokenizer   analysis.Tokenizer
	filters     []analysis.TokenFilter
	stems       *stemCache

	slab  []bindex.TokenFreq
	locs  []bindex.TokenLocation
	pairs []byte // the bytes of the pair terms counted so far
}

var textAnalyses sync.Pool

// getTextAnalysis returns a textAnalysis standing in for the analyzers
// words and body, or nil when they are not made as [addAnalyzer] makes
// them (then bleve's own analysis is used). Give it back with put.
func getTextAnalysis(words, body analysis.Analyzer) *textAnalysis {
	if ta, _ := textAnalyses.Get().(*textAnalysis); ta != nil && ta.words == words && ta.body == body {
		return ta
	}
	w, ok1 := words.(*analysis.DefaultAnalyzer)
	b, ok2 := body.(*analysis.DefaultAnalyzer)
	if !ok1 || !ok2 || len(w.CharFilters) > 0 || len(b.CharFilters) > 0 ||
		reflect.TypeOf(w.Tokenizer) != reflect.TypeOf(b.Tokenizer) || len(b.TokenFilters) != len(w.TokenFilters)+1 {
		return nil
	}
	if _, ok := b.TokenFilters[len(w.TokenFilters)].(*shingle.ShingleFilter); !ok {
		return nil
	}
	ta := &textAnalysis{words: words, body: body, tokenizer: w.Tokenizer}
	for i, f := range w.TokenFilters {
		if reflect.TypeOf(f) != reflect.TypeOf(b.TokenFilters[i]) {
			return nil
		}
		switch f := f.(type) {
		case *en.EnglishStemmerFilter:
			ta.stems = &stemCache{inner: f, m: map[string][]byte{}}
			ta.filters = append(ta.filters, ta.stems)
		case *cjk.CJKWidthFilter:
			ta.filters = append(ta.filters, widthFilter{inner: f})
		default:
			ta.filters = append(ta.filters, f)
		}
	}
	return ta
}

func (ta *textAnalysis) put() { textAnalyses.Put(ta) }

// tokens is what the words analyzer makes of text (the body's analyzer
// without its pairs).
func (ta *textAnalysis) tokens(text []byte) analysis.TokenStream {
	ts := ta.tokenizer.Tokenize(text)
	for _, f := range ta.filters {
		ts = f.Filter(ts)
	}
	return ts
}

// newFreq returns a zeroed TokenFreq for term from the slab.
func (ta *textAnalysis) newFreq(term []byte, hint int) *bindex.TokenFreq {
	if len(ta.slab) == cap(ta.slab) {
		ta.slab = make([]bindex.TokenFreq, 0, min(max(hint, 64), 4096))
	}
	ta.slab = append(ta.slab, bindex.TokenFreq{Term: term})
	return &ta.slab[len(ta.slab)-1]
}

// freqs is [analysis.TokenFrequency] of tokens.
func (ta *textAnalysis) freqs(tokens analysis.TokenStream, arrayPositions []uint64, opts bindex.FieldIndexingOptions) bindex.TokenFrequencies {
	rv := make(bindex.TokenFrequencies, len(tokens)/2+1)
	vectors, counted := opts.IncludeTermVectors(), !opts.SkipFreqNorm()
	if vectors && cap(ta.locs)-len(ta.locs) < len(tokens) {
		ta.locs = make([]bindex.TokenLocation, 0, max(len(tokens), 1024))
	}
	for _, t := range tokens {
		tf := rv[string(t.Term)]
		if tf == nil {
			tf = ta.newFreq(t.Term, len(tokens))
			rv[string(t.Term)] = tf
		}
		if vectors {
			ta.locs = append(ta.locs, bindex.TokenLocation{ArrayPositions: arrayPositions, Start: t.Start, End: t.End, Position: t.Position})
			tf.Locations = append(tf.Locations, &ta.locs[len(ta.locs)-1])
		}
		if counted {
			tf.SetFrequency(tf.Frequency() + 1)
		}
	}
	return rv
}

// count adds the terms of tokens to rv (their frequencies when counted),
// as [textAnalysis.freqs] makes them for a field without term vectors.
func (ta *textAnalysis) count(rv bindex.TokenFrequencies, tokens analysis.TokenStream, counted bool) {
	for _, t := range tokens {
		tf := rv[string(t.Term)]
		if tf == nil {
			tf = ta.newFreq(t.Term, len(tokens))
			rv[string(t.Term)] = tf
		}
		if counted {
			tf.SetFrequency(tf.Frequency() + 1)
		}
	}
}

// analysisChunk is about the most text of one field analysed at once
// when the field has no term vectors (see [analyseFields]): a variable
// for tests.
var analysisChunk = 64 << 10

// nextCut returns where the first piece of text, about max bytes, ends:
// after a newline, else after a space or tab between two ASCII bytes.
// No token, word pair across spaces or CJK bigram spans either (nor does
// folding join across them), so analysing the pieces one by one makes
// the terms the whole text makes. Text with no such place within max
// bytes is cut at the first one after; text with none at all is one
// piece.
func nextCut(text []byte, max int) int {
	if len(text) <= max {
		return len(text)
	}
	if i := bytes.LastIndexByte(text[:max], '\n'); i >= 0 {
		return i + 1
	}
	for i := max - 1; i > 0; i-- {
		if asciiGap(text, i) {
			return i + 1
		}
	}
	for i := max; i < len(text); i++ {
		if text[i] == '\n' || asciiGap(text, i) {
			return i + 1
		}
	}
	return len(text)
}

// asciiGap reports whether text[i] is a space or tab between two ASCII
// bytes.
func asciiGap(text []byte, i int) bool {
	c := text[i]
	return (c == ' ' || c == '\t') && i > 0 && i+1 < len(text) && text[i-1] < utf8.RuneSelf && text[i+1] < utf8.RuneSelf
}

// Word pairs are the words' terms joined by pairSeparator; a gap in the
// positions (a stop word left out) stands as the term pairFiller. Both
// [addAnalyzer]'s shingle filters are configured with these.
const (
	pairSeparator = " "
	pairFiller    = ""
)

// bodyFreqs is [analysis.TokenFrequency] of the body analyzer's tokens
// (with its word pairs) for tokens, the words analyzer's, in a field
// without term vectors, and the number of those tokens. The pairs are
// those bleve's shingle filter (two words, originals kept) makes.
func (ta *textAnalysis) bodyFreqs(tokens analysis.TokenStream, opts bindex.FieldIndexingOptions) (bindex.TokenFrequencies, int) {
	rv := make(bindex.TokenFrequencies, len(tokens)+1)
	counted := !opts.SkipFreqNorm()
	n := 0
	count := func(term []byte) bool {
		n++
		tf := rv[string(term)]
		fresh := tf == nil
		if fresh {
			tf = ta.newFreq(term, len(tokens))
			rv[string(term)] = tf
		}
		if counted {
			tf.SetFrequency(tf.Frequency() + 1)
		}
		return fresh
	}
	// A pair's bytes are kept only when the pair is new: its term is
	// then a slice of ta.pairs, which is only ever appended to (a new
	// buffer when full, the old one kept by the terms that use it).
	pair := func(a, b []byte) {
		need := len(a) + len(pairSeparator) + len(b)
		if cap(ta.pairs)-len(ta.pairs) < need {
			ta.pairs = make([]byte, 0, max(need, 32<<10))
		}
		start := len(ta.pairs)
		ta.pairs = append(append(append(ta.pairs, a...), pairSeparator...), b...)
		if !count(ta.pairs[start:len(ta.pairs):len(ta.pairs)]) {
			ta.pairs = ta.pairs[:start]
		}
	}
	var prev []byte
	have, pos := false, 0
	filler := []byte(pairFiller)
	for _, t := range tokens {
		count(t.Term)
		for gap := t.Position - pos; gap > 1; gap-- {
			if have {
				pair(prev, filler)
			}
			prev, have = filler, true
		}
		pos = t.Position
		if have {
			pair(prev, t.Term)
		}
		prev, have = t.Term, true
	}
	return rv, n
}

// stemCache is the Snowball stemmer filter, remembering its answers.
type stemCache struct {
	inner analysis.TokenFilter
	m     map[string][]byte
	one   [1]*analysis.Token
}

// maxStems bounds a cache's words (about 3 MB); a full cache starts over.
const maxStems = 1 << 15

func (s *stemCache) Filter(in analysis.TokenStream) analysis.TokenStream {
	for _, t := range in {
		if stem, ok := s.m[string(t.Term)]; ok {
			t.Term = stem
			continue
		}
		word := string(t.Term)
		s.one[0] = t
		s.inner.Filter(s.one[:])
		s.one[0] = nil
		if len(s.m) >= maxStems {
			clear(s.m)
		}
		// The stem is shared by every token of the word: no filter after
		// this one changes a term in place.
		s.m[word] = t.Term[:len(t.Term):len(t.Term)]
	}
	return in
}

// widthFilter is the CJK width filter, skipping the terms it leaves as
// they are: it folds code points U+FF01..U+FF9F, all encoded from the
// byte 0xEF, and re-encodes each term, which changes only invalid UTF-8.
type widthFilter struct{ inner analysis.TokenFilter }

func (w widthFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	for i, t := range in {
		if bytes.IndexByte(t.Term, 0xEF) >= 0 || !utf8.Valid(t.Term) {
			w.inner.Filter(in[i : i+1])
		}
	}
	return in
}
