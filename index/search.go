package index

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/search/query"

	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/vault"
)

// Query is one search.
type Query struct {
	// Text is the query: plain words (every word must occur; if no
	// document holds them all, documents holding some are ranked), "exact
	// phrase" (must match), title:word or title:"a phrase" (must match the
	// title or an alias), -word or -"phrase" (must not match), and the
	// filters tag:T, path:P, agent:A, type:T written inline.
	Text string `json:"text"`
	// Limit is the most hits returned; default 10, at most 10,000.
	Limit int `json:"limit,omitempty"`
	// MinScore drops hits scoring below it.
	MinScore float64 `json:"min_score,omitempty"`
	// Filters. Agent, Type and Tag compare case-insensitively; PathPrefix
	// is a vault-relative path prefix ("projects/"); Since and Until bound
	// the document's date (frontmatter updated/date/created, the log
	// entry's time, else the file's mtime), both inclusive.
	Agent      string    `json:"agent,omitempty"`
	Type       string    `json:"type,omitempty"`
	Tag        string    `json:"tag,omitempty"`
	PathPrefix string    `json:"path_prefix,omitempty"`
	Since      time.Time `json:"since,omitzero"`
	Until      time.Time `json:"until,omitzero"`
	// NoSnippets skips reading the files for snippets (faster).
	NoSnippets bool `json:"no_snippets,omitempty"`
}

// Hit is one search result: a note, a section of one, a log entry or a
// decision.
type Hit struct {
	Path    string    `json:"path"`
	Line    int       `json:"line"`     // 1-based line where the section starts
	EndLine int       `json:"end_line"` // last line of the section
	Title   string    `json:"title"`
	Heading string    `json:"heading,omitempty"`
	Score   float64   `json:"score"`
	Snippet string    `json:"snippet"` // matched words wrapped in ** **
	Kind    string    `json:"kind"`    // note, log or decision
	Agent   string    `json:"agent,omitempty"`
	Type    string    `json:"type,omitempty"`
	Date    time.Time `json:"date,omitzero"`
}

// Results are the hits of a search, best first.
type Results struct {
	Query string `json:"query"`
	Total uint64 `json:"total"` // matching documents, of which Hits are the best
	Hits  []Hit  `json:"hits"`
}

// field boosts: title and aliases over tags and headings over body.
var fieldBoosts = []struct {
	field string
	boost float64
}{
	{"title", 3}, {"aliases", 3}, {"tagtext", 2}, {"headings", 2}, {"body", 1},
}

// parsedQuery is Query.Text taken apart.
type parsedQuery struct {
	words    []string // plain words, in order
	phrases  []string // "exact phrases"
	titles   []string // title:x
	excludes []string // -word, -"phrase"
	tags     []string
	paths    []string
	agents   []string
	types    []string
}

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
		if tok == "" {
			continue
		}
		switch {
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
		default:
			p.words = append(p.words, tok)
		}
	}
	return p
}

func matchField(text, field string, boost float64) query.Query {
	q := bleve.NewMatchQuery(text)
	q.SetField(field)
	q.SetBoost(boost)
	// The body holds words and word pairs; a word query matches words.
	q.Analyzer = analyzerName
	return q
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

// wordAnalyzer is the analyzer for query text (built on first use: the
// registry is filled by init functions).
var wordAnalyzer = sync.OnceValue(func() analysis.Analyzer {
	m, err := newMapping()
	if err != nil {
		panic(err) // a bug in the mapping, caught by every test
	}
	return m.AnalyzerNamed(analyzerName)
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

// analyzedTerms returns the index terms of text.
func analyzedTerms(text string) []string {
	var out []string
	for _, t := range wordAnalyzer().Analyze([]byte(text)) {
		out = append(out, string(t.Term))
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

// buildQuery turns a Query into a bleve query. It returns a usage error
// (wrapping vault.ErrInvalid) for a query that has nothing to look for.
//
// With all set, every plain word must occur in the document, in any of its
// text fields (checked on the "all" field, which holds them together); the
// field and proximity clauses then only score the documents that match,
// which is several times cheaper than scoring every document holding any
// of the words. Without all, any word may match.
func buildQuery(q Query, all bool) (query.Query, parsedQuery, error) {
	p := parseQueryText(q.Text)
	b := bleve.NewBooleanQuery()
	scored := false
	if len(p.words) > 0 {
		free := strings.Join(p.words, " ")
		var should []query.Query
		if all {
			// Every word in the "all" field (title, aliases, tags,
			// headings and body together); its score stands for the
			// body's.
			m := bleve.NewMatchQuery(free)
			m.SetField("all")
			m.Analyzer = analyzerName
			m.SetOperator(query.MatchQueryOperatorAnd)
			b.AddMust(m)
		}
		for _, fb := range fieldBoosts {
			if all && fb.field == "body" {
				continue
			}
			should = append(should, matchField(free, fb.field, fb.boost))
		}
		if len(p.words) > 1 {
			// Proximity: adjacent word pairs in the body (see
			// pairsAnalyzerName), and the words as a phrase in the title
			// or an alias (short fields: cheap).
			should = append(should, pairsMatch(free, false, pairBoost), phraseField(free, "title", phraseBoost), phraseField(free, "aliases", phraseBoost))
		}
		b.AddShould(should...)
		if !all {
			b.SetMinShould(1)
		}
		scored = true
		if all && len(analyzedTerms(free)) == 0 {
			// Only stop words: nothing to require.
			b = bleve.NewBooleanQuery()
			b.AddShould(should...)
			b.SetMinShould(1)
		}
	}
	for _, ph := range p.phrases {
		b.AddMust(anyField(ph, true))
		scored = true
	}
	for _, t := range p.titles {
		b.AddMust(bleve.NewDisjunctionQuery(phraseField(t, "title", 4), phraseField(t, "aliases", 4)))
		scored = true
	}
	for _, x := range p.excludes {
		b.AddMustNot(anyField(x, true))
	}
	var filters []query.Query
	term := func(field, v string) {
		t := bleve.NewTermQuery(v)
		t.SetField(field)
		filters = append(filters, t)
	}
	for _, a := range append(p.agents, q.Agent) {
		if a = strings.ToLower(strings.TrimSpace(a)); a != "" {
			term("agent", a)
		}
	}
	for _, t := range append(p.types, q.Type) {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" {
			term("type", t)
		}
	}
	for _, t := range append(p.tags, q.Tag) {
		if t = strings.ToLower(strings.Trim(strings.TrimSpace(t), "#")); t != "" {
			// As in Obsidian, a tag matches its nested tags too: infra
			// finds #infra/deploy.
			exact := bleve.NewTermQuery(t)
			exact.SetField("tag")
			nested := bleve.NewPrefixQuery(strings.TrimSuffix(t, "/") + "/")
			nested.SetField("tag")
			filters = append(filters, bleve.NewDisjunctionQuery(exact, nested))
		}
	}
	for _, pp := range append(p.paths, q.PathPrefix) {
		if pp = strings.TrimSpace(pp); pp != "" {
			c, err := vault.CleanRel(pp)
			if err != nil {
				return nil, p, fmt.Errorf("path filter %q: %w", pp, vault.ErrInvalid)
			}
			if strings.HasSuffix(pp, "/") {
				c += "/"
			}
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
			return nil, p, fmt.Errorf("empty search: give words to look for, or a filter: %w", vault.ErrInvalid)
		}
		b.AddMust(bleve.NewMatchAllQuery())
	}
	if len(filters) > 0 {
		b.AddFilter(bleve.NewConjunctionQuery(filters...))
	}
	return b, p, nil
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
	bq, pq, err := buildQuery(q, true)
	if err != nil {
		return nil, err
	}
	if c := ix.remoteOrTakeover(); c != nil {
		res, err := c.search(ctx, q)
		if !isConnErr(err) {
			return res, err
		}
		if ix.takeover() {
			return ix.Search(ctx, q)
		}
		return nil, err
	}
	ix.flushPending(ctx)
	ix.bmu.RLock()
	defer ix.bmu.RUnlock()
	if ix.bi == nil {
		return nil, ErrClosed
	}
	req := bleve.NewSearchRequestOptions(bq, q.Limit, 0, false)
	req.Fields = []string{"path", "title", "heading", "line", "end", "agent", "type", "kind", "date"}
	if len(pq.words) == 0 && len(pq.phrases) == 0 && len(pq.titles) == 0 {
		req.SortBy([]string{"-date", "_id"})
	}
	sr, err := ix.bi.SearchInContext(ctx, req)
	if err == nil && sr.Total == 0 && len(pq.words) > 1 {
		// No document holds every word: rank those holding some.
		loose, _, _ := buildQuery(q, false)
		req.Query = loose
		sr, err = ix.bi.SearchInContext(ctx, req)
	}
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	res := &Results{Query: q.Text, Total: sr.Total, Hits: []Hit{}}
	var an analysis.Analyzer
	if !q.NoSnippets {
		an = ix.bi.Mapping().AnalyzerNamed(analyzerName)
	}
	terms := queryTerms(an, pq)
	for _, h := range sr.Hits {
		if q.MinScore > 0 && h.Score < q.MinScore {
			continue
		}
		hit := Hit{Score: h.Score}
		if math.IsNaN(hit.Score) || math.IsInf(hit.Score, 0) {
			hit.Score = 0 // JSON cannot carry it
		}
		hit.Path, _ = h.Fields["path"].(string)
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
		if an != nil {
			hit.Snippet = ix.snippet(an, terms, hit)
		}
		res.Hits = append(res.Hits, hit)
	}
	return res, nil
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

const snippetRunes = 200

// snippet reads the hit's section from its file and returns the window
// with the most distinct query terms, terms wrapped in ** **. To stay
// cheap on long sections it finds candidate places by plain substring
// search for each analysed query term (a stem is a prefix of its words; a
// CJK bigram is a substring), and runs the analyzer only on the window.
func (ix *Index) snippet(an analysis.Analyzer, terms map[string]bool, h Hit) string {
	text := maskComments(ix.sectionText(h))
	if text == "" {
		return ""
	}
	type span struct {
		start, end int
		term       string
	}
	lower := asciiLower(text)
	var cands []span
	for t := range terms {
		for off, n := 0, 0; n < 50; n++ {
			k := strings.Index(lower[off:], t)
			if k < 0 {
				break
			}
			cands = append(cands, span{off + k, off + k + len(t), t})
			off += k + len(t)
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].start < cands[j].start })
	maxBytes := snippetRunes * 2
	start := 0
	if len(cands) > 0 {
		best, bestN := 0, 0
		for i := range cands {
			seen := map[string]bool{}
			for j := i; j < len(cands) && cands[j].end-cands[i].start <= maxBytes; j++ {
				seen[cands[j].term] = true
			}
			if len(seen) > bestN {
				best, bestN = i, len(seen)
			}
		}
		start = cands[best].start - 40
	}
	if start < 0 {
		start = 0
	}
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	// Start on a word boundary.
	if start > 0 {
		if k := strings.IndexAny(text[start:], " \n"); k >= 0 && k < 30 {
			start += k + 1
		}
	}
	end := start
	for n := 0; end < len(text) && n < snippetRunes; n++ {
		_, sz := utf8.DecodeRuneInString(text[end:])
		end += sz
	}
	win := text[start:end]
	var b strings.Builder
	if start > 0 {
		b.WriteString("…")
	}
	pos := 0
	for _, t := range an.Analyze([]byte(win)) {
		if !terms[string(t.Term)] || t.Start < pos || t.End > len(win) {
			continue
		}
		b.WriteString(win[pos:t.Start])
		b.WriteString("**" + win[t.Start:t.End] + "**")
		pos = t.End
	}
	b.WriteString(win[pos:])
	if end < len(text) {
		b.WriteString("…")
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// asciiLower lower-cases ASCII letters only, so byte offsets stay valid.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// sectionText returns the lines of a hit's section, with the frontmatter
// and the simplest markup taken away. At most 64 KiB.
func (ix *Index) sectionText(h Hit) string {
	// Paths are indexed NFC; a file saved with an NFD name (macOS) is
	// found by its NFD form.
	data, err := os.ReadFile(filepath.Join(ix.v.Root(), filepath.FromSlash(h.Path)))
	if err != nil {
		data, err = os.ReadFile(filepath.Join(ix.v.Root(), filepath.FromSlash(norm.NFD.String(h.Path))))
	}
	if err != nil || !utf8.Valid(data) {
		return ""
	}
	_, body, ok := vault.SplitFrontmatter(data)
	skip := 0
	if ok {
		skip = bytes.Count(data[:len(data)-len(body)], []byte("\n"))
	}
	from, to := h.Line-1, h.EndLine
	if from < skip {
		from = skip
	}
	// Cut lines from..to-1 (0-based) without splitting the whole file:
	// notes can be large and only one section is wanted.
	start, line := 0, 0
	for line < from {
		k := bytes.IndexByte(data[start:], '\n')
		if k < 0 {
			return ""
		}
		start += k + 1
		line++
	}
	end := start
	for to <= from || line < to {
		k := bytes.IndexByte(data[end:], '\n')
		if k < 0 {
			end = len(data)
			break
		}
		end += k + 1
		line++
		if end-start > 64<<10 {
			break
		}
	}
	lines := strings.Split(string(data[start:end]), "\n")
	from, to = 0, len(lines)
	sec := lines[from:to]
	for i, l := range sec {
		// Heading markers: blank them, keeping offsets.
		if n := len(l) - len(strings.TrimLeft(l, "#")); n > 0 && n <= 6 && len(l) > n && l[n] == ' ' {
			sec[i] = strings.Repeat(" ", n) + l[n:]
		}
	}
	s := strings.Join(sec, "\n")
	if len(s) > 64<<10 {
		s = s[:64<<10]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return markupCleaner.Replace(s)
}

// markupCleaner blanks the markup characters that would clutter a snippet,
// keeping every byte offset (same-length replacements).
var markupCleaner = strings.NewReplacer("[[", "  ", "]]", "  ", "**", "  ", "__", "  ", "`", " ", "\r", " ")

// flushPending indexes the watcher's queued paths now, debounce or not, so
// that a search right after a save sees it.
func (ix *Index) flushPending(ctx context.Context) {
	if !ix.watching.Load() || ix.rebuilding.Load() || ix.catchingUp.Load() {
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
var phraseBoost, pairBoost = 10.0, 200.0

// maskComments blanks out HTML comments (the live log's signature lines)
// and Obsidian %%comments%% so they never show in a snippet. They become
// spaces of the same length, keeping every other offset.
func maskComments(text string) string {
	if !strings.Contains(text, "<!--") && !strings.Contains(text, "%%") {
		return text
	}
	b := []byte(text)
	for _, d := range [][2]string{{"<!--", "-->"}, {"%%", "%%"}} {
		for off := 0; ; {
			i := strings.Index(string(b[off:]), d[0])
			if i < 0 {
				break
			}
			i += off
			j := strings.Index(string(b[i+len(d[0]):]), d[1])
			end := len(b)
			if j >= 0 {
				end = i + len(d[0]) + j + len(d[1])
			}
			for k := i; k < end; k++ {
				if b[k] != '\n' {
					b[k] = ' '
				}
			}
			off = end
		}
	}
	return string(b)
}
