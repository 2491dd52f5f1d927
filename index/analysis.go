package index

import (
	"bytes"
	"strings"
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
	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/internal/invisible"
)

// analyzerName is the text analysis of every text field: Unicode word
// breaking, width and case folding, Korean split into syllables, CJK
// bigrams (so 배포 is found inside 배포를 and 배포가), English possessives,
// stop words, Latin and Greek accents removed (see accentFilterName) and
// Snowball stemming. Two Hangul words separated only by
// spaces also give the bigram of the last syllable of the first and the
// first of the second (see crossTokenizerName).
const analyzerName = "nexus"

// queryAnalyzerName analyses the words of a query: analyzerName without
// the bigrams across spaces, so that "시간 초과" (two words, in any order)
// does not require the pair that only "시간초과" and "시간 초과" hold.
const queryAnalyzerName = "nexus_query"

// crossTokenizerName is the Unicode word tokenizer plus, between two
// Hangul words separated only by spaces, one more token: the bigram of the
// first word's last syllable and the second's first. Korean writes many
// compounds either way (시간초과 and 시간 초과, "time-out"); with it the
// bigrams of 시간초과 (시간 간초 초과) are all in "시간 초과" too, so a
// query of the compound written together finds the notes that spaced it.
// (The other way round needs nothing: 시간 and 초과 are in both.)
const crossTokenizerName = "nexus_unicode_cross"

// foldTokenizerName is the Unicode word tokenizer on folded text (see
// fold), without the bigrams across spaces: the query analyzer's.
const foldTokenizerName = "nexus_unicode_folded"

// hangulFilterName splits the Hangul runs of a token (UAX #29 keeps a Korean
// word with its particles, or "API를", as one word) into one token per
// syllable typed Ideographic, which the CJK bigram filter then pairs up.
const hangulFilterName = "nexus_hangul"

func init() {
	registry.RegisterTokenFilter(hangulFilterName, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return hangulFilter{}, nil
	})
	registry.RegisterTokenizer(crossTokenizerName, func(map[string]any, *registry.Cache) (analysis.Tokenizer, error) {
		return crossTokenizer{unicodetok.NewUnicodeTokenizer()}, nil
	})
	registry.RegisterTokenizer(foldTokenizerName, func(map[string]any, *registry.Cache) (analysis.Tokenizer, error) {
		return foldTokenizer{unicodetok.NewUnicodeTokenizer()}, nil
	})
}

type crossTokenizer struct{ words analysis.Tokenizer }

func (c crossTokenizer) Tokenize(input []byte) analysis.TokenStream {
	return foldedTokens(input, c.tokenize)
}

type foldTokenizer struct{ words analysis.Tokenizer }

func (f foldTokenizer) Tokenize(input []byte) analysis.TokenStream {
	return foldedTokens(input, func(text []byte) analysis.TokenStream {
		ts, ascii := words(f.words, text)
		if !ascii {
			ts = withUnspaced(text, ts)
		}
		return ts
	})
}

// foldedTokens is tokenize's tokens of input folded (see fold). Their
// offsets are those of the folded text, so that the filters after the
// tokenizer (the CJK bigrams join two characters whose offsets touch)
// see the text as a reader does; a caller that needs offsets in input
// folds it itself and maps them back (see highlight).
func foldedTokens(input []byte, tokenize func([]byte) analysis.TokenStream) analysis.TokenStream {
	if !needsFold(input) {
		return tokenize(input) // as nearly all text is
	}
	text, _, _ := fold(input)
	return tokenize(text)
}

// foldKey is a keyword as it is indexed and looked for (a tag, an agent,
// a property key, a type): folded as text is (see fold) and lower-cased.
func foldKey(s string) string {
	return strings.ToLower(foldString(s))
}

// foldString is s folded (see fold).
func foldString(s string) string {
	if b := []byte(s); needsFold(b) {
		text, _, _ := fold(b)
		return string(text)
	}
	return s
}

// rightQuote is U+2019, the apostrophe of typography, which fold makes '.
var rightQuote = []byte("\u2019")

// ligatures are the letters of the Latin ligatures U+FB00–U+FB06, as
// fold writes them; ligatureLead starts their UTF-8 (and that of the rest
// of the block up to U+FB3F, which fold leaves as it is).
var (
	ligatures    = [...]string{"ff", "fi", "fl", "ffi", "ffl", "st", "st"}
	ligatureLead = []byte{0xEF, 0xAC}
)

// needsFold reports whether fold would change input: whether it holds an
// invisible code point, a typographic apostrophe, a Latin ligature, a
// letter lowerShrinking changes, text not in NFC or invalid UTF-8. Text is checked by its runs of
// non-ASCII bytes (ASCII is NFC, and a combining mark after an ASCII
// letter starts the next run, where the check sees it); a run of Hangul
// syllables, most Korean words, is NFC without asking the tables.
func needsFold(input []byte) bool {
	for i := 0; i < len(input); {
		if input[i] < utf8.RuneSelf {
			i++
			continue
		}
		j := i + 1
		for j < len(input) && input[j] >= utf8.RuneSelf {
			j++
		}
		run := input[i:j]
		if !hangulSyllables(run) && (!utf8.Valid(run) || invisible.Index(run) >= 0 || bytes.Contains(run, rightQuote) || bytes.Contains(run, ligatureLead) || mayShrinkLower(run) || norm.NFC.QuickSpan(run) != len(run)) {
			return true
		}
		i = j
	}
	return false
}

// hangulSyllables reports whether run is only precomposed Hangul
// syllables (U+AC00–U+D7A3), which are NFC and never invisible.
func hangulSyllables(run []byte) bool {
	if len(run)%3 != 0 {
		return false
	}
	for k := 0; k < len(run); k += 3 {
		r := rune(run[k]&0x0F)<<12 | rune(run[k+1]&0x3F)<<6 | rune(run[k+2]&0x3F)
		if run[k]&0xF0 != 0xE0 || run[k+1]&0xC0 != 0x80 || run[k+2]&0xC0 != 0x80 || r < 0xAC00 || r > 0xD7A3 {
			return false
		}
	}
	return true
}

// fold returns input as a reader sees it, for words to be made of: without
// its invisible code points (see package invisible), so "de\u00adploy"
// (a soft hyphen) is the word "deploy" and "back\u200bup" (a zero-width
// space) "backup"; and in NFC, so a decomposed "배포" or "café" (typed or
// pasted on macOS) is the word a query of the composed one looks for; and
// with the typographic apostrophe (U+2019) made ASCII, so "wasn’t" and
// "O’Brien" are the words "wasn't" and "O'Brien" typed; and with the Latin
// ligatures (ﬁ, ﬂ) written as their letters, so "ﬁnancial" copied from a
// PDF is "financial"; and with İ and the few other letters whose lower
// case is shorter lower-cased (see lowerShrinking).
// start[k] and end[k] are where the code points that made text[k] begin
// and end in input, so a token of text (any token, after every filter)
// maps to the whole of its word in input. An invalid byte is U+FFFD.
func fold(input []byte) (text []byte, start, end []int) {
	text = make([]byte, 0, len(input))
	start, end = make([]int, 0, len(input)), make([]int, 0, len(input))
	for i := 0; i < len(input); {
		r, n := utf8.DecodeRune(input[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			// An invalid byte (the notes' text never has them:
			// markdown.Parse replaces them) is U+FFFD, so that
			// dropping a code point between two cannot join them.
			text = append(text, "\uFFFD"...)
			for range 3 {
				start, end = append(start, i), append(end, i+1)
			}
		case invisible.Is(r):
		case r == '\u2019':
			// The apostrophe as typography writes it (macOS and
			// Obsidian's smart quotes): the word is the same.
			text = append(text, '\'')
			start, end = append(start, i), append(end, i+n)
		case r >= 0xFB00 && r <= 0xFB06:
			// A Latin ligature (ﬁ, ﬂ, ﬃ: text copied from a PDF).
			for _, c := range []byte(ligatures[r-0xFB00]) {
				text = append(text, c)
				start, end = append(start, i), append(end, i+n)
			}
		default:
			text = append(text, input[i:i+n]...)
			for k := i; k < i+n; k++ {
				start, end = append(start, k), append(end, k+1)
			}
		}
		i += n
	}
	text, start, end = nfcSpans(text, start, end)
	if mayShrinkLower(text) {
		// Lower-casing İ makes i, which may compose with the marks
		// after it.
		text, start, end = nfcSpans(lowerShrinking(text, start, end))
	}
	return text, start, end
}

// nfcSpans is text in NFC, with the source spans of its bytes (from and
// to are those of text's). NFC is that of each piece between two
// boundaries (where nothing composes across), so each piece's bytes come
// from its own source.
func nfcSpans(text []byte, from, to []int) (nfc []byte, start, end []int) {
	if norm.NFC.QuickSpan(text) == len(text) {
		return text, from, to
	}
	nfc = make([]byte, 0, len(text))
	start, end = make([]int, 0, len(text)), make([]int, 0, len(text))
	for p0 := 0; p0 < len(text); {
		p1 := p0 + norm.NFC.NextBoundary(text[p0:], true)
		if p1 <= p0 {
			p1 = len(text)
		}
		piece := text[p0:p1]
		if norm.NFC.IsNormal(piece) {
			nfc = append(nfc, piece...)
			start, end = append(start, from[p0:p1]...), append(end, to[p0:p1]...)
		} else {
			// Composed or decomposed: each byte of it comes from all
			// of its source.
			k := len(nfc)
			nfc = norm.NFC.Append(nfc, piece...)
			for range nfc[k:] {
				start, end = append(start, from[p0]), append(end, to[p1-1])
			}
		}
		p0 = p1
	}
	return nfc, start, end
}

// lowerShrinking is text (with its source spans) with each letter whose
// lower case is shorter in UTF-8 lower-cased: the Turkish İ (i), ẞ (ß) and
// a few Latin capitals of the U+2C60 and U+A780 blocks. bleve's
// lower-casing garbles such a letter and the rest of its word into
// invalid UTF-8 ("İstanbul" was the term "i\xb0stanbu"), so they are
// lower-cased before it runs. It runs after NFC, which makes İ of a
// decomposed I and dot.
func lowerShrinking(text []byte, start, end []int) ([]byte, []int, []int) {
	out := make([]byte, 0, len(text))
	from, to := start, end
	start, end = make([]int, 0, len(text)), make([]int, 0, len(text))
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRune(text[i:])
		if l := unicode.ToLower(r); r >= utf8.RuneSelf && utf8.RuneLen(l) < n {
			k := len(out)
			out = utf8.AppendRune(out, l)
			for range out[k:] {
				start, end = append(start, from[i]), append(end, to[i+n-1])
			}
		} else {
			out = append(out, text[i:i+n]...)
			start, end = append(start, from[i:i+n]...), append(end, to[i:i+n]...)
		}
		i += n
	}
	return out, start, end
}

// mayShrinkLower reports whether b may hold a letter whose lower case is
// shorter in UTF-8 (TestMayShrinkLower holds it to every code point), by
// the first bytes of their UTF-8.
func mayShrinkLower(b []byte) bool {
	for i := 0; i+1 < len(b); i++ {
		switch c, d := b[i], b[i+1]; {
		case c == 0xC4 && d == 0xB0: // İ
			return true
		case c == 0xE1 && d == 0xBA && i+2 < len(b) && b[i+2] == 0x9E: // ẞ
			return true
		case c == 0xE2 && (d == 0x84 || d == 0xB1), c == 0xEA && (d == 0x9E || d == 0x9F):
			return true
		}
	}
	return false
}

func (c crossTokenizer) tokenize(input []byte) analysis.TokenStream {
	ts, ascii := words(c.words, input)
	if ascii {
		return ts // no Hangul: no cross tokens
	}
	ts = withUnspaced(input, ts)
	var out analysis.TokenStream
	for i, t := range ts {
		if i > 0 {
			if x := crossToken(input, ts[i-1], t); x != nil {
				if out == nil {
					out = append(make(analysis.TokenStream, 0, len(ts)+8), ts[:i]...)
				}
				out = append(out, x)
			}
		}
		if out != nil {
			out = append(out, t)
		}
	}
	if out == nil {
		return ts
	}
	return out
}

// crossToken is the bigram across the spaces between a and b when both
// are Hangul there, else nil.
func crossToken(input []byte, a, b *analysis.Token) *analysis.Token {
	if a.End >= b.Start || b.Start-a.End > 8 {
		return nil
	}
	for _, c := range string(input[a.End:b.Start]) {
		if c != ' ' && c != '\t' && c != '\u3000' {
			return nil
		}
	}
	last, n := utf8.DecodeLastRune(a.Term)
	first, m := utf8.DecodeRune(b.Term)
	if !unicode.Is(unicode.Hangul, last) || !unicode.Is(unicode.Hangul, first) {
		return nil
	}
	term := make([]byte, 0, n+m)
	term = append(append(term, a.Term[len(a.Term)-n:]...), b.Term[:m]...)
	return &analysis.Token{Term: term, Start: a.End - n, End: b.Start + m, Position: b.Position, Type: analysis.Double, KeyWord: true}
}

type hangulFilter struct{}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Hangul, r) || unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

func (hangulFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	need := false
	for _, t := range in {
		if t.Type != analysis.Ideographic && t.Type != analysis.Double && hasCJK(t.Term) {
			need = true
			break
		}
	}
	if !need {
		return in
	}
	out := make(analysis.TokenStream, 0, len(in)*2)
	for _, t := range in {
		if t.Type == analysis.Ideographic || t.Type == analysis.Double || !hasCJK(t.Term) {
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
		apostropheFilterName,
		// After the stop words, which are all ASCII: "thé" and the
		// Vietnamese "ăn" are words, not "the" and "an". After the
		// Hangul split, whose offsets need terms as long as their text.
		accentFilterName,
		en.SnowballStemmerName,
	}
	if err := m.AddCustomAnalyzer(analyzerName, map[string]any{
		"type":          custom.Name,
		"tokenizer":     crossTokenizerName,
		"token_filters": chain,
	}); err != nil {
		return err
	}
	if err := m.AddCustomAnalyzer(queryAnalyzerName, map[string]any{
		"type":          custom.Name,
		"tokenizer":     foldTokenizerName,
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
			"separator":       pairSeparator,
			"filler":          pairFiller,
		}); err != nil {
			return err
		}
	}
	if err := m.AddCustomAnalyzer(pairsAnalyzerName, map[string]any{
		"type":          custom.Name,
		"tokenizer":     crossTokenizerName,
		"token_filters": append(append([]any(nil), chain...), pairFilterName),
	}); err != nil {
		return err
	}
	return m.AddCustomAnalyzer(bodyAnalyzerName, map[string]any{
		"type":          custom.Name,
		"tokenizer":     crossTokenizerName,
		"token_filters": append(append([]any(nil), chain...), wordPairFilterName),
	})
}
