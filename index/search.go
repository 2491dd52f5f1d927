package index

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/index/holder"
	"github.com/nexus-memory/nexus/vault"
)

// The search's types are the holder wire's (package holder), so that a
// process asking a holder needs no search engine.
type (
	// Query is one search: see [holder.Query].
	Query = holder.Query
	// Hit is one search result: see [holder.Hit].
	Hit = holder.Hit
	// Results are the hits of a search, best first: see [holder.Results].
	Results = holder.Results
)

// Hit.Match: the strongest way a hit matched a query of plain words.
// Hits are ordered by it (title-phrase first), then by score.
const (
	MatchTitlePhrase = holder.MatchTitlePhrase // the words as a phrase in the title or an alias
	MatchTitleWords  = holder.MatchTitleWords  // every query word in the title, the file name or an alias
	MatchTogether    = holder.MatchTogether    // query words side by side in the text
	MatchTitle       = holder.MatchTitle       // a word in the title or an alias
	MatchHeading     = holder.MatchHeading     // a word in a tag or a heading
	MatchWords       = holder.MatchWords       // the words, elsewhere
)

// field boosts: title and aliases over tags and headings over body.
var fieldBoosts = []struct {
	field string
	boost float64
}{
	{"title", 3}, {"aliases", 3}, {"tagtext", 2}, {"headings", 2}, {"props", 1.5}, {"body", 1}, {"longbody", 1},
}

// parsedQuery is Query.Text taken apart.
type parsedQuery struct {
	words    []string // plain words, in order
	phrases  []string // "exact phrases"
	titles   []string // title:x
	excludes []string // -word, -"phrase"
	notTags  []string // -tag:x, -#🚀
	tags     []string
	paths    []string
	agents   []string
	types    []string
	props    []propFilter
	notProps []propFilter // -prop:key:value
}

// propFilter is prop:key:value (value "" for prop:key).
type propFilter struct{ key, value string }

// parseQueryText splits the query syntax. It never fails: an unclosed
// quote runs to the end.
func parseQueryText(s string) parsedQuery {
	var p parsedQuery
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		neg := false
		propKey := ""
		if r == '-' && i+1 < len(s) && s[i+1] != ' ' {
			neg = true
			i++
		}
		field := ""
		// field:value
		if j := strings.IndexFunc(s[i:], func(r rune) bool { return unicode.IsSpace(r) || r == '"' || r == ':' }); j > 0 && i+j < len(s) && s[i+j] == ':' {
			f := strings.ToLower(s[i : i+j])
			switch f {
			case "title", "tag", "path", "agent", "type":
				field = f
				i += j + 1
			case "prop":
				field = f
				i += j + 1
				// The key runs to the next ':' (no spaces or quotes).
				k := strings.IndexFunc(s[i:], func(r rune) bool { return unicode.IsSpace(r) || r == '"' || r == ':' })
				if k < 0 {
					k = len(s) - i
				}
				key := strings.ToLower(s[i : i+k])
				i += k
				if i >= len(s) || s[i] != ':' {
					if key != "" {
						pf := propFilter{key: key}
						if neg {
							p.notProps = append(p.notProps, pf)
						} else {
							p.props = append(p.props, pf)
						}
					}
					continue
				}
				i++
				propKey = key
			}
		}
		var tok string
		quoted := false
		if i < len(s) && s[i] == '"' {
			quoted = true
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				tok = s[i+1:]
				i = len(s)
			} else {
				tok = s[i+1 : i+1+end]
				i += end + 2
			}
		} else {
			end := strings.IndexFunc(s[i:], unicode.IsSpace)
			if end < 0 {
				end = len(s) - i
			}
			tok = s[i : i+end]
			i += end
		}
		tok = strings.TrimSpace(tok)
		if field == "prop" {
			if propKey != "" {
				pf := propFilter{key: propKey, value: tok}
				if neg {
					p.notProps = append(p.notProps, pf)
				} else {
					p.props = append(p.props, pf)
				}
			}
			continue
		}
		if tok == "" {
			continue
		}
		switch {
		case neg && field == "tag":
			p.notTags = append(p.notTags, tok)
		case neg && !quoted && queryTag(tok) != "":
			p.notTags = append(p.notTags, queryTag(tok))
		case neg:
			p.excludes = append(p.excludes, tok)
		case field == "title":
			p.titles = append(p.titles, tok)
		case field == "tag":
			p.tags = append(p.tags, tok)
		case field == "path":
			p.paths = append(p.paths, tok)
		case field == "agent":
			p.agents = append(p.agents, tok)
		case field == "type":
			p.types = append(p.types, tok)
		case quoted:
			p.phrases = append(p.phrases, tok)
		case queryTag(tok) != "":
			// #to-read, #🚀: the tag, as tag: is (SPEC §5).
			p.tags = append(p.tags, queryTag(tok))
		default:
			p.words = append(p.words, tok)
		}
	}
	return p
}

// queryTag is the tag a query word names when it is #TAG, TAG being
// what a note's #tag can be (letters, digits, marks, emoji, _ - and /,
// not digits only, as index/markdown reads tags): #to-read, #🚀,
// #infra/deploy. "" otherwise: #123 and # are words.
func queryTag(tok string) string {
	t, ok := strings.CutPrefix(tok, "#")
	if !ok || !tagTextRe.MatchString(t) || strings.Trim(t, "/") == "" {
		return ""
	}
	if strings.IndexFunc(t, func(r rune) bool { return !unicode.IsDigit(r) }) < 0 {
		return ""
	}
	return t
}

// tagTextRe is the text of a tag (index/markdown's tagRe).
var tagTextRe = regexp.MustCompile(`^[\p{L}\p{N}\p{M}\p{So}\x{1F3FB}-\x{1F3FF}\x{200D}\x{FE0F}_/\-]+$`)

// tagQuery matches the tag t (# optional) and, as in Obsidian, its
// nested tags: infra finds #infra/deploy. It is nil for no tag.
func tagQuery(t string) query.Query {
	if t = foldKey(strings.Trim(strings.TrimSpace(t), "#")); t == "" {
		return nil
	}
	exact := bleve.NewTermQuery(t)
	exact.SetField("tag")
	nested := bleve.NewPrefixQuery(strings.TrimSuffix(t, "/") + "/")
	nested.SetField("tag")
	return bleve.NewDisjunctionQuery(exact, nested)
}

func matchField(text, field string, boost float64) query.Query {
	q := bleve.NewMatchQuery(text)
	q.SetField(field)
	q.SetBoost(boost)
	// The body holds words and word pairs; a word query matches words.
	q.Analyzer = queryAnalyzerName
	return q
}

// wordsIn matches a query word in field, for the title and heading
// tiers ("a query word in its title"): the words of one term each in one
// query, any of them; a word of several terms (a CJK word's bigrams,
// e-mail) in a query of its own needing them all, so that 블로그 (로그)
// in a title is not 로그인 (로그, 그인) there.
func wordsIn(words []string, field string, boost float64) []query.Query {
	var single []string
	var out []query.Query
	for _, w := range words {
		switch n := len(analyzedTerms(w)); {
		case n == 1:
			single = append(single, w)
		case n > 1:
			q := matchField(w, field, boost)
			q.(*query.MatchQuery).SetOperator(query.MatchQueryOperatorAnd)
			out = append(out, q)
		}
	}
	if len(single) > 0 {
		out = append(out, matchField(strings.Join(single, " "), field, boost))
	}
	return out
}

// pairsMatch matches the word pairs of text in the body: any of them
// (operator OR, for ranking) or all of them (AND, for a phrase).
func pairsMatch(text string, all bool, boost float64) query.Query {
	q := bleve.NewMatchQuery(text)
	q.SetField("body")
	q.Analyzer = pairsAnalyzerName
	q.SetBoost(boost)
	if all {
		q.SetOperator(query.MatchQueryOperatorAnd)
	}
	return q
}

// phraseField matches text as a phrase in field. The body has no term
// positions: there a phrase is all of its word pairs (a single word is
// the word).
func phraseField(text, field string, boost float64) query.Query {
	if field == "longbody" {
		// No pairs, no positions: a phrase there is its words.
		q := matchField(text, field, boost)
		q.(*query.MatchQuery).SetOperator(query.MatchQueryOperatorAnd)
		return q
	}
	if field == "body" {
		if len(analyzedTerms(text)) < 2 {
			return matchField(text, field, boost)
		}
		return pairsMatch(text, true, boost)
	}
	q := bleve.NewMatchPhraseQuery(text)
	q.SetField(field)
	q.SetBoost(boost)
	return q
}

// queryMapping is the index mapping, for analysing query text (built on
// first use: the analysis registry is filled by init functions).
var queryMapping = sync.OnceValue(func() *mapping.IndexMappingImpl {
	m, err := newMapping()
	if err != nil {
		panic(err) // a bug in the mapping, caught by every test
	}
	return m
})

func uniq(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// analyzedTerms returns the index terms of text's words (as a query has
// them: no Hangul bigrams across spaces).
func analyzedTerms(text string) []string {
	var out []string
	for _, t := range queryMapping().AnalyzerNamed(queryAnalyzerName).Analyze([]byte(text)) {
		out = append(out, string(t.Term))
	}
	return out
}

func pairTerms(text string) []string {
	var out []string
	for _, t := range queryMapping().AnalyzerNamed(pairsAnalyzerName).Analyze([]byte(text)) {
		out = append(out, string(t.Term))
	}
	return out
}

// crossPairs returns the body pair terms that join two adjacent query
// words (stop words left out): for "staging ssh port", "stage ssh" and
// "ssh port"; for two Hangul words, those of the words with a space
// between and with punctuation between. Pairs inside one word (the CJK bigrams of 모니터 pair up
// too) are left out: they say nothing about words standing together.
func crossPairs(words []string) []string {
	var kept []string
	for _, w := range words {
		if w == "" && len(kept) > 0 && kept[len(kept)-1] != "" {
			kept = append(kept, "") // a Korean question word: no pair across it
		} else if len(analyzedTerms(w)) > 0 {
			kept = append(kept, w)
		}
	}
	var out []string
	seen := map[string]bool{}
	for i := 0; i+1 < len(kept); i++ {
		if kept[i] == "" || kept[i+1] == "" {
			continue
		}
		for _, p := range pairTerms(kept[i]) {
			seen[p] = true
		}
		for _, p := range pairTerms(kept[i+1]) {
			seen[p] = true
		}
		// Typed with only spaces between, two Hangul words pair through
		// the bigram across the space (see crossTokenizerName); with
		// punctuation between (모델 + 하네스), a note has the pair of
		// the first word's last term and the second's first, as words
		// of other scripts always do.
		a, b := analyzedTerms(kept[i]), analyzedTerms(kept[i+1])
		direct := a[len(a)-1] + pairSeparator + b[0]
		for _, p := range append(pairTerms(kept[i]+" "+kept[i+1]), direct) {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// anyField matches text (as a phrase when phrase is set) in any text field.
func anyField(text string, phrase bool) query.Query {
	var qs []query.Query
	for _, fb := range fieldBoosts {
		if phrase {
			qs = append(qs, phraseField(text, fb.field, fb.boost))
		} else {
			qs = append(qs, matchField(text, fb.field, fb.boost))
		}
	}
	return bleve.NewDisjunctionQuery(qs...)
}

// plan is a Query compiled into bleve clauses. The documents are those
// matching words and every must, none of mustNot, within filter.
//
// When tiers is set (plain words, all required) they are ranked tier by
// tier (see [Index.run]); otherwise by their score on words, must and
// should.
type plan struct {
	p       parsedQuery
	words   query.Query // every plain word, on the "all" field; nil if none
	wordsF  query.Query // the same, unscored (see wordsFilter)
	must    []query.Query
	should  []query.Query
	mustNot []query.Query
	filter  query.Query
	tiers   [][]query.Query
	strong  []string      // each tier's Hit.Match
	bonus   []query.Query // scored, never required: the words as typed, when matched by their stems
	// headPhrase scores the words as a phrase in a heading, in the
	// together, title and heading tiers (nil for a query of one word).
	headPhrase query.Query
	// typed is the query's words as typed, as exactName keys them, when
	// tier 0 is the notes the query names: those whose title or file
	// name is typed come first in it (see [Index.run]).
	typed  string
	loose  bool // any word may match (MinShould 1 on should)
	byDate bool // nothing scores: newest first
}

// validQuery replaces the invalid UTF-8 in q's text and filters with
// U+FFFD, as [markdown.Parse] does in the notes: the words on either side
// of a stray byte are then two words in the query as in the notes. (Given
// as it is, bleve's tokenizer drops the words after some invalid bytes,
// and "alpha \xff beta" found notes without "beta".) A holder receives
// the same query: JSON would make the same replacement on the way.
//
// The text is then folded as the index folds the notes' words (see fold),
// so that its filters (prop:KEY, tag:) compare as the index does.
//
// Typographic double quotes (“a phrase”, „a phrase“, as macOS and phones
// type them) quote a phrase as '"' does.
func validQuery(q Query) Query {
	for _, s := range []*string{&q.Text, &q.Tag, &q.Agent, &q.Type} {
		*s = strings.ToValidUTF8(*s, "\uFFFD")
	}
	q.Text = smartQuotes.Replace(foldString(q.Text))
	return q
}

var smartQuotes = strings.NewReplacer("\u201c", `"`, "\u201d", `"`, "\u201e", `"`)

// buildQuery compiles a Query. It returns a usage error (wrapping
// vault.ErrInvalid) for a query that has nothing to look for.
//
// With all set, every plain word must occur in the document, in any of its
// text fields (checked on the "all" field, which holds them together).
// Without all, any word may match.
func buildQuery(q Query, all bool) (*plan, error) {
	return buildPlan(q, parseQueryText(q.Text), all)
}

// buildPlan is buildQuery for the query text taken apart as p (whose
// words may be fewer than q.Text's: see [Index.relaxed]).
func buildPlan(q Query, p parsedQuery, all bool) (*plan, error) {
	pl := &plan{p: p}
	scored := false
	if len(p.words) > 0 {
		// Words are matched without the Korean particle or ending they
		// carry (지역은 matches 지역); the words as typed score above.
		words, stemmed := koreanStems(p.words)
		free := strings.Join(words, " ")
		nterms := len(analyzedTerms(free))
		var name, phrase, titleWords, together, names, heads []query.Query
		// The query is the note's name: its title, file name or an alias.
		for _, k := range uniq([]string{nameKey(strings.Join(p.words, " ")), nameKey(free)}) {
			if k != "" {
				t := bleve.NewTermQuery(k)
				t.SetField("name")
				// Named by its title or file name scores above named
				// by an alias: the help vault's "Aliases" above its
				// translations, which keep "aliases" as an alias.
				byTitle := bleve.NewConjunctionQuery(t, phraseField(free, "title", phraseBoost))
				name = append(name, t, byTitle)
			}
		}
		if pairs := crossPairs(words); len(pairs) > 0 {
			// The words as a phrase in the title or an alias, and
			// adjacent query words adjacent in the body (see
			// pairsAnalyzerName).
			phrase = []query.Query{phraseField(free, "title", phraseBoost), phraseField(free, "aliases", phraseBoost)}
			for _, pair := range pairs {
				t := bleve.NewTermQuery(pair)
				t.SetField("body")
				t.SetBoost(pairBoost)
				together = append(together, t)
			}
		}
		// Every word in the title, the file name or an alias, in any
		// order: the note about the words, above notes that mention
		// them side by side (키움 API 가이드 is the note titled 키움 API
		// 정상 동작 가이드, not an index note listing "키움 API 가이드").
		var each []query.Query
		for _, w := range uniq(words) {
			if qs := append(wordsIn([]string{w}, "title", 3), wordsIn([]string{w}, "aliases", 3)...); len(qs) > 0 {
				each = append(each, bleve.NewDisjunctionQuery(qs...))
			}
		}
		if len(each) > 1 {
			titleWords = []query.Query{bleve.NewConjunctionQuery(each...)}
		}
		for _, fb := range fieldBoosts {
			switch fb.field {
			case "title", "aliases":
				names = append(names, wordsIn(words, fb.field, fb.boost)...)
			case "tagtext", "headings":
				heads = append(heads, wordsIn(words, fb.field, fb.boost)...)
			}
		}
		if stemmed {
			exact := matchField(strings.Join(p.words, " "), "all", exactBoost)
			pl.bonus = append(pl.bonus, exact)
		}
		if nterms > 1 {
			// The words as a phrase in a heading: of the notes that
			// hold the words side by side, or a word in the title or a
			// heading, the one with a section about them first (the post with "##
			// Cost per use" above a note saying it once). Not in the
			// title tiers, where the title says what a note is about.
			pl.headPhrase = phraseField(free, "headings", pairBoost)
		}
		if nterms > 0 {
			m := bleve.NewMatchQuery(free)
			m.SetField("all")
			m.Analyzer = queryAnalyzerName
			if all {
				m.SetOperator(query.MatchQueryOperatorAnd)
				pl.words, pl.wordsF = m, wordsFilter(free)
			} else {
				// No note holds every word: those holding any, in
				// the same tiers, so that a title still counts.
				pl.words, pl.wordsF = m, anyWordFilter(free)
			}
			if len(name) > 0 {
				pl.typed = exactName(strings.Join(p.words, " "))
			}
			for i, t := range [][]query.Query{name, phrase, titleWords, together, names, heads} {
				if len(t) > 0 {
					pl.tiers = append(pl.tiers, t)
					pl.strong = append(pl.strong, []string{MatchTitlePhrase, MatchTitlePhrase, MatchTitleWords, MatchTogether, MatchTitle, MatchHeading}[i])
				}
			}
		} else {
			// Only stop words: rank the documents holding any of them.
			pl.should = append(pl.should, phrase...)
			pl.should = append(pl.should, titleWords...)
			pl.should = append(pl.should, together...)
			pl.should = append(pl.should, names...)
			pl.should = append(pl.should, heads...)
			pl.should = append(pl.should, matchField(free, "body", 1), matchField(free, "longbody", 1))
			pl.loose = true
		}
		scored = true
	}
	for _, ph := range p.phrases {
		pl.must = append(pl.must, anyField(ph, true))
		scored = true
	}
	for _, t := range p.titles {
		pl.must = append(pl.must, bleve.NewDisjunctionQuery(phraseField(t, "title", 4), phraseField(t, "aliases", 4)))
		scored = true
	}
	for _, x := range p.excludes {
		pl.mustNot = append(pl.mustNot, anyField(x, true))
	}
	var filters []query.Query
	term := func(field, v string) {
		t := bleve.NewTermQuery(v)
		t.SetField(field)
		filters = append(filters, t)
	}
	for _, a := range append(p.agents, q.Agent) {
		if a = foldKey(strings.TrimSpace(a)); a != "" {
			term("agent", a)
		}
	}
	for _, t := range append(p.types, q.Type) {
		if t = foldKey(strings.TrimSpace(t)); t != "" {
			term("type", t)
		}
	}
	for _, t := range append(p.tags, q.Tag) {
		if tq := tagQuery(t); tq != nil {
			filters = append(filters, tq)
		}
	}
	for _, t := range p.notTags {
		if tq := tagQuery(t); tq != nil {
			pl.mustNot = append(pl.mustNot, tq)
		}
	}
	for _, pf := range p.props {
		filters = append(filters, propQuery(pf))
	}
	for _, pf := range p.notProps {
		pl.mustNot = append(pl.mustNot, propQuery(pf))
	}
	for _, pp := range append(p.paths, q.PathPrefix) {
		if pp = strings.TrimSpace(pp); pp != "" {
			c, err := vault.CleanRel(pp)
			if err != nil {
				return nil, fmt.Errorf("path filter %q: %w", pp, vault.ErrInvalid)
			}
			if strings.HasSuffix(pp, "/") {
				c += "/"
			}
			c = norm.NFC.String(c) // paths are indexed NFC
			pq := bleve.NewPrefixQuery(c)
			pq.SetField("path")
			filters = append(filters, pq)
		}
	}
	if !q.Since.IsZero() || !q.Until.IsZero() {
		yes := true
		dq := bleve.NewDateRangeInclusiveQuery(q.Since, q.Until, &yes, &yes)
		dq.SetField("date")
		filters = append(filters, dq)
	}
	if !scored {
		if len(filters) == 0 {
			return nil, fmt.Errorf("empty search: give words to look for, or a filter: %w", vault.ErrInvalid)
		}
		pl.must = append(pl.must, bleve.NewMatchAllQuery())
		pl.byDate = true
	}
	if len(filters) > 0 {
		pl.filter = bleve.NewConjunctionQuery(filters...)
	}
	return pl, nil
}

// propQuery matches the documents whose property pf.key holds every
// analysed term of pf.value (or, with no value, that have the property).
func propQuery(pf propFilter) query.Query {
	terms := uniq(analyzedTerms(pf.value))
	if len(terms) == 0 {
		terms = []string{""}
	}
	var qs []query.Query
	for _, t := range terms {
		tq := bleve.NewTermQuery(pf.key + ":" + t)
		tq.SetField("prop")
		qs = append(qs, tq)
	}
	if len(qs) == 1 {
		return qs[0]
	}
	return bleve.NewConjunctionQuery(qs...)
}

// query is a plan without tiers as one bleve query.
func (pl *plan) query() query.Query {
	b := pl.base()
	if pl.words != nil {
		b.AddMust(pl.words)
	}
	b.AddShould(pl.should...)
	if pl.loose {
		b.SetMinShould(1)
	}
	return pl.withBonus(b)
}

// withBonus adds the plan's bonus clauses to b, scored and optional: to
// a query of required clauses only (b has no should clause of its own).
func (pl *plan) withBonus(b *query.BooleanQuery) *query.BooleanQuery {
	if len(pl.bonus) > 0 && !pl.loose {
		b.AddShould(pl.bonus...)
	}
	return b
}

// base holds the clauses every form of the plan shares, and the filters
// (bleve takes one filter query: a later AddFilter replaces it).
func (pl *plan) base(more ...query.Query) *query.BooleanQuery {
	b := bleve.NewBooleanQuery()
	b.AddMust(pl.must...)
	b.AddMustNot(pl.mustNot...)
	if pl.filter != nil {
		more = append(more, pl.filter)
	}
	switch len(more) {
	case 0:
	case 1:
		b.AddFilter(more[0])
	default:
		b.AddFilter(bleve.NewConjunctionQuery(more...))
	}
	return b
}

// tierQuery is the plan restricted to tier t: the documents with a clause
// of tier t and none of a stronger tier, scored on the clauses of tier t.
// Tier len(tiers) holds the documents with no strong clause, scored on
// their words.
//
// Every word is required in each tier, but as a filter: unscored, bleve
// skips through its postings instead of reading them, so a tier costs in
// proportion to its strong matches, not to the documents holding the
// words.
func (pl *plan) tierQuery(t int) query.Query {
	if t >= len(pl.tiers) {
		b := pl.base()
		b.AddMust(pl.words)
		for _, stronger := range pl.tiers {
			b.AddMustNot(stronger...)
		}
		return pl.withBonus(b)
	}
	b := pl.base(pl.wordsF)
	b.AddMust(bleve.NewDisjunctionQuery(pl.tiers[t]...))
	for _, stronger := range pl.tiers[:t] {
		b.AddMustNot(stronger...)
	}
	// Within the tier, the words over the whole note count too: of the
	// notes a query names, the one whose text is about the words first
	// (the English "Backlinks" note above its translations that keep
	// the English title).
	b.AddShould(pl.words)
	if pl.headPhrase != nil && pl.strong[t] != MatchTitlePhrase && pl.strong[t] != MatchTitleWords {
		b.AddShould(pl.headPhrase)
	}
	return pl.withBonus(b)
}

// wordsFilter requires every word, unscored, as a conjunction of terms:
// bleve turns that into one bitmap of documents, which it skips through.
// A lone term is given twice, because a conjunction of one is not
// optimised and bleve then walks the term's postings one by one.
func wordsFilter(free string) query.Query {
	terms := uniq(analyzedTerms(free))
	if len(terms) == 1 {
		terms = append(terms, terms[0])
	}
	var qs []query.Query
	for _, t := range terms {
		tq := bleve.NewTermQuery(t)
		tq.SetField("all")
		qs = append(qs, tq)
	}
	return bleve.NewConjunctionQuery(qs...)
}

// anyWordFilter requires any of the words, unscored.
func anyWordFilter(free string) query.Query {
	var qs []query.Query
	for _, t := range uniq(analyzedTerms(free)) {
		tq := bleve.NewTermQuery(t)
		tq.SetField("all")
		qs = append(qs, tq)
	}
	return bleve.NewDisjunctionQuery(qs...)
}

// countQuery matches the plan's documents without scoring them.
func (pl *plan) countQuery() query.Query {
	b := pl.base()
	if pl.words != nil {
		b.AddMust(pl.words)
	}
	if pl.loose {
		b.AddShould(pl.should...)
		b.SetMinShould(1)
	}
	return b
}

// Search runs a query. In a holder process it answers from the index as
// it is (call [Index.Sync] first, or keep [Index.Start] running, for
// current answers); otherwise it asks the holder.
func (ix *Index) Search(ctx context.Context, q Query) (*Results, error) {
	if ix.isClosed() {
		return nil, ErrClosed
	}
	if q.Limit <= 0 {
		q.Limit = 10
	}
	if q.Limit > 10000 {
		q.Limit = 10000
	}
	q = validQuery(q)
	pl, err := buildQuery(q, true)
	if err != nil {
		return nil, err
	}
	pq := pl.p
	if res, remote, err := viaHolder(ctx, ix, func(c *client) (*Results, error) {
		return c.search(ctx, q)
	}); remote {
		return res, err
	}
	ix.flushPending(ctx)
	ix.bmu.RLock()
	defer ix.bmu.RUnlock()
	if ix.bi == nil {
		return nil, ErrClosed
	}
	var r *ranked
	err = unpanic(func() (err error) {
		r, err = ix.run(ctx, pl, q.Limit, q.MinScore)
		if err == nil && r.total == 0 && len(pq.words) > 1 {
			// No document holds every word: rank those holding some.
			r, err = ix.fallback(ctx, q, pl, q.Limit, q.MinScore)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	res := &Results{Query: q.Text, Total: r.total, TotalCapped: r.capped, Hits: []Hit{}, CatchingUp: (ix.catchingUp.Load() && !ix.opts.WaitCatchUp) || ix.partial.Load()}
	an := ix.bi.Mapping().AnalyzerNamed(analyzerName)
	terms := queryTerms(an, pq)
	for i, h := range r.hits {
		hit := Hit{Score: h.Score, Match: r.match[i]}
		if math.IsNaN(hit.Score) || math.IsInf(hit.Score, 0) {
			hit.Score = 0 // JSON cannot carry it
		}
		hit.Path, _ = h.Fields["path"].(string)
		if disk, _ := h.Fields["disk"].(string); disk != "" {
			hit.Path = disk // as on disk, so it opens (an NFD name)
		}
		hit.Title, _ = h.Fields["title"].(string)
		hit.Heading, _ = h.Fields["heading"].(string)
		hit.Kind, _ = h.Fields["kind"].(string)
		hit.Agent, _ = h.Fields["agent"].(string)
		hit.Type, _ = h.Fields["type"].(string)
		if f, ok := h.Fields["line"].(float64); ok {
			hit.Line = int(f)
		}
		if f, ok := h.Fields["end"].(float64); ok {
			hit.EndLine = int(f)
		}
		if s, ok := h.Fields["date"].(string); ok {
			hit.Date, _ = time.Parse(time.RFC3339Nano, s)
		}
		var data []byte // the hit's file, read once for the mask, the section and the snippet
		if spans, _ := h.Fields["spans"].(string); spans != "" && hit.Kind == KindNote {
			// A long note: shown at its best section.
			data = ix.readHit(hit.Path)
			atBestSection(&hit, parseSpans(spans), terms, data)
		}
		if hit.Kind == KindLog || hit.Kind == KindDecision {
			var masked bool
			if data, masked = ix.maskQuarantined(&hit, ix.readHit(hit.Path)); masked {
				res.Hits = append(res.Hits, hit)
				continue
			}
		}
		// Shown without invisible code points, as the snippet is (they
		// hide text from the person reading and can carry instructions
		// to an agent), and in NFC; after the quarantine check, which
		// looks for them, and before the snippet, which may be the title.
		hit.Title, hit.Heading = shownText(hit.Title), shownText(hit.Heading)
		withholdTitles(&hit) // scanned as they leave the process, with the snippet
		if !q.NoSnippets && (q.Snippets <= 0 || i < q.Snippets) {
			hit.Snippet = ix.snippet(an, terms, hit, data)
		}
		res.Hits = append(res.Hits, hit)
	}
	return res, nil
}

// hitFields are the stored fields a Hit is made of.
var hitFields = []string{"path", "disk", "title", "heading", "spans", "line", "end", "agent", "type", "kind", "date"}

// run evaluates a plan: the best limit documents and how many match.
// ix.bmu must be held.
//
// A plan with tiers is ranked tier by tier: the notes the query names
// (their title, file name or an alias is the query), then documents whose
// title or an alias holds the words as a phrase, then documents where two
// query words stand side by side, then documents with a word in the title
// or an alias, then in a tag or a heading, then the rest; by score within
// a tier. Only as many tiers are scored as it takes to fill the page. This
// is what keeps a query of common words fast: bleve scores every document
// a query matches, and the strong tiers are a small part of them.
func (ix *Index) run(ctx context.Context, pl *plan, limit int, minScore float64) (*ranked, error) {
	if len(pl.tiers) == 0 {
		req := bleve.NewSearchRequestOptions(pl.query(), limit, 0, false)
		req.Fields = hitFields
		if pl.byDate {
			req.SortBy([]string{"-date", "_id"})
		}
		sr, err := ix.bi.SearchInContext(ctx, req)
		if err != nil {
			return nil, err
		}
		r := &ranked{total: sr.Total}
		for _, h := range sr.Hits {
			if h.Score >= minScore || minScore <= 0 {
				r.hits, r.match = append(r.hits, h), append(r.match, "")
			}
		}
		return r, nil
	}
	r := &ranked{}
	var err error
	if r.total, r.capped, err = ix.count(ctx, pl.countQuery(), max(countLimit, uint64(limit))); err != nil {
		return nil, err
	}
	want := uint64(limit)
	if !r.capped {
		want = min(r.total, want)
	}
	// Each tier is its own search, on the index as it is then: a note the
	// holder re-indexed in between could show up in two tiers.
	seen := map[string]bool{}
	for t := 0; t <= len(pl.tiers) && uint64(len(r.hits)) < want; t++ {
		size := limit - len(r.hits)
		if t == 0 && pl.typed != "" {
			size = max(size, namedFetch)
		}
		req := bleve.NewSearchRequestOptions(pl.tierQuery(t), size, 0, false)
		req.Fields = hitFields
		sr, err := ix.bi.SearchInContext(ctx, req)
		if err != nil {
			return nil, err
		}
		if t == 0 && pl.typed != "" {
			sr.Hits = namedAsTyped(sr.Hits, pl.typed, limit-len(r.hits))
		}
		name := MatchWords
		if t < len(pl.strong) {
			name = pl.strong[t]
		}
		for _, h := range sr.Hits {
			// Scores compare within a tier: MinScore applies to each
			// tier's own, and the next tier fills the page.
			if seen[h.ID] || (minScore > 0 && h.Score < minScore) {
				continue
			}
			seen[h.ID] = true
			r.hits = append(r.hits, h)
			r.match = append(r.match, name)
		}
	}
	return r, nil
}

// namedFetch is how many of the notes a query names are ranked together
// (see namedAsTyped): a name is rarely shared by more.
const namedFetch = 100

// namedAsTyped orders the notes a query names (tier 0, by score) so that
// those whose title or file name is the query as typed come first, and
// keeps n: "callouts" is the note Callouts.md before Callout.md, and
// "aliases" is Aliases.md before the Swedish Aliaser.md, which the
// stemmer makes the same name. A person typing a note's exact name means
// that note (Obsidian's quick switcher ranks it so too).
func namedAsTyped(hits search.DocumentMatchCollection, typed string, n int) search.DocumentMatchCollection {
	exact := func(h *search.DocumentMatch) bool {
		p, _ := h.Fields["path"].(string)
		title, _ := h.Fields["title"].(string)
		return exactName(fileTitle(p)) == typed || exactName(title) == typed
	}
	sort.SliceStable(hits, func(i, j int) bool { return exact(hits[i]) && !exact(hits[j]) })
	return hits[:min(n, len(hits))]
}

// exactName is a name as typed, compared without case and with its
// spaces collapsed, folded as the index folds text, but not stemmed.
func exactName(s string) string {
	return strings.Join(strings.Fields(foldKey(s)), " ")
}

// fallback ranks the documents holding some of the query's words, when
// none holds every word. First those holding the most of the query that
// some document holds whole (see [Index.relaxed]: "socks" of "which socks
// last longest", the words of "Harrison Ford sci-fi film" but "film"),
// ranked in the tiers of those words; then the rest holding any word, in
// the tiers of the query, so that a title still counts. ix.bmu must be
// held.
func (ix *Index) fallback(ctx context.Context, q Query, pl *plan, limit int, minScore float64) (*ranked, error) {
	loose, err := buildQuery(q, false)
	if err != nil {
		return nil, err
	}
	kept, err := ix.relaxed(ctx, pl)
	if err != nil {
		return nil, err
	}
	var first *ranked
	shown := 0
	if len(kept) > 0 {
		p := pl.p
		p.words = kept
		rp, err := buildPlan(q, p, true)
		if err != nil {
			return nil, err
		}
		if first, err = ix.run(ctx, rp, limit, minScore); err != nil {
			return nil, err
		}
		for i, m := range first.match {
			if m == MatchTitlePhrase || m == MatchTitleWords {
				// The title holds those of the words, not the query.
				first.match[i] = MatchTitle
			}
		}
		shown = len(first.hits)
	}
	r, err := ix.run(ctx, loose, limit+shown, minScore)
	if err != nil || first == nil {
		return r, err
	}
	seen := map[string]bool{}
	for _, h := range first.hits {
		seen[h.ID] = true
	}
	for i, h := range r.hits {
		if len(first.hits) < limit && !seen[h.ID] {
			first.hits, first.match = append(first.hits, h), append(first.match, r.match[i])
		}
	}
	first.total, first.capped = r.total, r.capped
	return first, nil
}

// relaxed is the most of the query's words that some document holds
// (within the query's filters and phrases), when none holds them all:
// the words no document holds are left out, then the most common one
// (held by the most documents) at a time, until some document holds
// every word left. Words of no term (stop words) are kept as they are.
// It is nil when no document holds any word. ix.bmu must be held.
func (ix *Index) relaxed(ctx context.Context, pl *plan) ([]string, error) {
	type word struct {
		text string
		n    uint64 // documents holding it, up to countLimit
	}
	var words []word
	var stop []string
	stems, _ := koreanStems(pl.p.words)
	stemOf := map[string]string{}
	for i, w := range pl.p.words {
		stem := stems[i]
		stemOf[w] = stem
		if len(analyzedTerms(stem)) == 0 {
			stop = append(stop, w)
			continue
		}
		n, _, err := ix.count(ctx, pl.base(wordsFilter(stem)), countLimit)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			words = append(words, word{w, n})
		}
	}
	// The rarest first; of equally common words, the earlier.
	sort.SliceStable(words, func(i, j int) bool { return words[i].n < words[j].n })
	for len(words) > 1 {
		var kept []string
		for _, w := range words {
			kept = append(kept, stemOf[w.text])
		}
		n, _, err := ix.count(ctx, pl.base(wordsFilter(strings.Join(kept, " "))), 1)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			break
		}
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		return nil, nil
	}
	in := map[string]bool{}
	for _, w := range words {
		in[w.text] = true
	}
	for _, w := range stop {
		in[w] = true
	}
	var kept []string
	for _, w := range pl.p.words {
		if in[w] {
			kept = append(kept, w) // in the query's order, for its pairs
		}
	}
	return kept, nil
}

// ranked is what [Index.run] found.
type ranked struct {
	hits   []*search.DocumentMatch
	match  []string // each hit's Hit.Match
	total  uint64   // matching documents, counted up to countLimit for tiers
	capped bool     // there are more than total
}

// countLimit is how far a search counts its matches (Results.Total).
// Counting every match of a common word would cost more than finding the
// best ones.
var countLimit uint64 = 1000 // a variable for tests

// count counts the documents q matches, unscored, stopping at limit
// (capped is then true). ix.bmu must be held.
func (ix *Index) count(ctx context.Context, q query.Query, limit uint64) (n uint64, capped bool, err error) {
	adv, err := ix.bi.Advanced()
	if err != nil {
		return 0, false, err
	}
	r, err := adv.Reader()
	if err != nil {
		return 0, false, err
	}
	defer r.Close()
	s, err := q.Searcher(ctx, r, ix.bi.Mapping(), search.SearcherOptions{Score: "none"})
	if err != nil {
		return 0, false, err
	}
	defer s.Close()
	sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize(), 0)}
	for {
		if n&255 == 0 && ctx.Err() != nil {
			return 0, false, ctx.Err()
		}
		d, err := s.Next(sctx)
		if err != nil {
			return 0, false, err
		}
		if d == nil {
			return n, false, nil
		}
		if n == limit {
			return n, true, nil
		}
		n++
		sctx.DocumentMatchPool.Put(d)
	}
}

// queryTerms analyses the query's words and phrases into index terms, for
// highlighting.
func queryTerms(an analysis.Analyzer, p parsedQuery) map[string]bool {
	terms := map[string]bool{}
	if an == nil {
		return terms
	}
	all := append(append(append([]string(nil), p.words...), p.phrases...), p.titles...)
	for _, t := range an.Analyze([]byte(strings.Join(all, " "))) {
		terms[string(t.Term)] = true
	}
	return terms
}

// flushPending indexes the watcher's queued paths now, debounce or not, so
// that a search right after a save sees it.
func (ix *Index) flushPending(ctx context.Context) {
	if !ix.watching.Load() || ix.rebuilding.Load() || (ix.catchingUp.Load() && (!ix.opts.WaitCatchUp || ix.partial.Load())) {
		return // nothing queued, or a long job runs: answer from the index as it is
	}
	ix.mu.Lock() // waits for an update in progress, so it is seen
	defer ix.mu.Unlock()
	if ix.w == nil {
		return
	}
	if queued := ix.w.drain(); len(queued) > 0 {
		if err := ix.update(ctx, queued); err != nil {
			ix.warn(fmt.Sprintf("update index: %v", err))
		}
	}
}

// Proximity boosts: the words as a title phrase, and each adjacent pair in
// the body.
const phraseBoost, pairBoost = 10.0, 200.0

// exactBoost weighs the words as typed when the query matched them by
// their stems (koreanStem): 지역은 over 지역에서 for 지역은.
const exactBoost = 2.0

// TopNotes is the word search as one ranking of notes, for combining
// with another ranking of the same notes by path (a fusion with a search
// by meaning): the best n notes for q, best first, so that a note's rank
// is its index plus one. Each note is one hit (its Path as on disk, its
// best section's Line, its Title, Snippet and Score); log entries and
// decisions, which share their file's path, are left out. q.Limit is
// ignored; n is at most 10,000.
func (ix *Index) TopNotes(ctx context.Context, q Query, n int) ([]Hit, error) {
	n = min(max(n, 1), 10000)
	q.Limit = min(2*n+10, 10000) // room for the log entries left out
	for {
		res, err := ix.Search(ctx, q)
		if err != nil {
			return nil, err
		}
		notes := make([]Hit, 0, n)
		for _, h := range res.Hits {
			if h.Kind == KindNote && len(notes) < n {
				notes = append(notes, h)
			}
		}
		if len(notes) == n || len(res.Hits) < q.Limit || q.Limit == 10000 {
			return notes, nil
		}
		q.Limit = min(2*q.Limit, 10000)
	}
}
