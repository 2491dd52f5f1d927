package index

import (
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/shingle"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"
)

// analyzerName is the text analysis of every text field: Unicode word
// breaking, width and case folding, Korean split into syllables, CJK
// bigrams (so 배포 is found inside 배포를 and 배포가), English possessives,
// stop words and Snowball stemming.
const analyzerName = "nexus"

// hangulFilterName splits the Hangul runs of a token (UAX #29 keeps a Korean
// word with its particles, or "API를", as one word) into one token per
// syllable typed Ideographic, which the CJK bigram filter then pairs up.
const hangulFilterName = "nexus_hangul"

func init() {
	registry.RegisterTokenFilter(hangulFilterName, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return hangulFilter{}, nil
	})
}

type hangulFilter struct{}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Hangul, r) || unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

func (hangulFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	need := false
	for _, t := range in {
		if t.Type != analysis.Ideographic && hasCJK(t.Term) {
			need = true
			break
		}
	}
	if !need {
		return in
	}
	out := make(analysis.TokenStream, 0, len(in)*2)
	for _, t := range in {
		if t.Type == analysis.Ideographic || !hasCJK(t.Term) {
			out = append(out, t)
			continue
		}
		// Split into runs: each CJK rune is its own Ideographic token, each
		// other run one AlphaNumeric token.
		term := t.Term
		runStart := -1
		for i := 0; i < len(term); {
			r, n := utf8.DecodeRune(term[i:])
			if isCJK(r) {
				if runStart >= 0 {
					out = append(out, sub(t, runStart, i, analysis.AlphaNumeric))
					runStart = -1
				}
				out = append(out, sub(t, i, i+n, analysis.Ideographic))
			} else if runStart < 0 {
				runStart = i
			}
			i += n
		}
		if runStart >= 0 {
			out = append(out, sub(t, runStart, len(term), analysis.AlphaNumeric))
		}
	}
	return out
}

// sub makes a token of term[i:j]. Offsets stay right when the term has the
// same length as the source text, which holds after lower-casing for the
// scripts involved here.
func sub(t *analysis.Token, i, j int, typ analysis.TokenType) *analysis.Token {
	return &analysis.Token{Term: t.Term[i:j], Start: t.Start + i, End: t.Start + j, Position: t.Position, Type: typ, KeyWord: typ == analysis.Ideographic}
}

func hasCJK(b []byte) bool {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if isCJK(r) {
			return true
		}
		i += n
	}
	return false
}

// bodyAnalyzerName indexes the body: analyzerName's words plus word
// pairs: "backup restore error" is indexed as backup, restor, error,
// "backup restor" and "restor error". Query words that stand together in
// a note match its pair terms, which are far rarer than the words, so
// proximity is rewarded by plain term matching instead of costly position
// checks over every matching note; quoted phrases match as all of their
// pairs. One field and one pass of analysis hold both.
const bodyAnalyzerName = "nexus_body"

// pairsAnalyzerName analyses a query into its word pairs only.
const pairsAnalyzerName = "nexus_pairs"

const (
	pairFilterName     = "nexus_pair"      // pairs only
	wordPairFilterName = "nexus_word_pair" // words and pairs
)

// addAnalyzer registers the analyzers in m.
func addAnalyzer(m *mapping.IndexMappingImpl) error {
	chain := []any{
		cjk.WidthName,
		lowercase.Name,
		hangulFilterName,
		cjk.BigramName,
		en.PossessiveName,
		en.StopName,
		en.SnowballStemmerName,
	}
	if err := m.AddCustomAnalyzer(analyzerName, map[string]any{
		"type":          custom.Name,
		"tokenizer":     unicodetok.Name,
		"token_filters": chain,
	}); err != nil {
		return err
	}
	for name, original := range map[string]bool{pairFilterName: false, wordPairFilterName: true} {
		if err := m.AddCustomTokenFilter(name, map[string]any{
			"type":            shingle.Name,
			"min":             2.0,
			"max":             2.0,
			"output_original": original,
			"separator":       " ",
			"filler":          "",
		}); err != nil {
			return err
		}
	}
	if err := m.AddCustomAnalyzer(pairsAnalyzerName, map[string]any{
		"type":          custom.Name,
		"tokenizer":     unicodetok.Name,
		"token_filters": append(append([]any(nil), chain...), pairFilterName),
	}); err != nil {
		return err
	}
	return m.AddCustomAnalyzer(bodyAnalyzerName, map[string]any{
		"type":          custom.Name,
		"tokenizer":     unicodetok.Name,
		"token_filters": append(append([]any(nil), chain...), wordPairFilterName),
	})
}
