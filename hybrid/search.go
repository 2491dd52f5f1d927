package hybrid

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/nexus-memory/nexus/embed"
	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/vault"
)

// RRFK is the k of reciprocal-rank fusion: a note at rank r of a ranking
// gets 1/(RRFK+r) from it. 60 is the value of the method's paper and of
// most hybrid search engines; smaller k weighs the top ranks more.
const RRFK = 60

// MaxAlso bounds the alternative phrasings of one search.
const MaxAlso = 8

// Via names (index.Hit.Via).
const (
	ViaWords   = "words"   // the query's words
	ViaAlso    = "also"    // the words of an alternative phrasing
	ViaMeaning = "meaning" // the embedding model
)

// MatchMeaning is the Match of a hit found by meaning alone.
const MatchMeaning = "meaning"

// OffNotice is the notice of a search without a model (once per vault).
const OffNotice = "search by meaning is off: set search.embeddings in .nexus/config.yaml (docs/embeddings.md)"

// offMarker, in .nexus/index/, records that OffNotice was given.
const offMarker = "meaning-off-noticed"

// Options tune a [Searcher]. The zero value is usable.
type Options struct {
	// Provider, when set, is used instead of the one search.embeddings
	// configures (tests, benchmarks).
	Provider embed.Provider
	// Budget bounds the embedding of a query; default
	// search.embeddings.query_timeout (2s).
	Budget time.Duration
	// Depth is how many notes each ranking by meaning contributes to
	// the fusion; default max(3×limit, 30). A ranking by words
	// contributes limit+10 (its snippets are what a search by words
	// spends its time on; past that rank a note gains under 1/(k+limit+10)).
	Depth int
}

// Searcher answers searches by words and meaning over one index. It is
// safe for concurrent use; keep one per process (it loads the model and
// the vectors once).
type Searcher struct {
	v    *vault.Vault
	ix   *index.Index
	opts Options

	mu      sync.Mutex
	cfg     vault.EmbeddingsConfig // the config p was made from
	p       embed.Provider
	perr    error
	st      *embed.Store
	seen    stamp // SectionsFile as last read
	heads   map[string]record
	offOnce sync.Once
}

type stamp struct {
	size int64
	mod  time.Time
}

// NewSearcher returns a Searcher over ix, the index of v.
func NewSearcher(v *vault.Vault, ix *index.Index, opts Options) *Searcher {
	return &Searcher{v: v, ix: ix, opts: opts}
}

// ranking is one ranked list of the fusion.
type ranking struct {
	via  string
	hits []index.Hit // best first
	pin  bool        // its title-phrase hits stay first
}

// Search runs q by words, and by meaning when a model is configured; the
// also phrasings (at most MaxAlso, blanks and repeats dropped) are run
// too, with q's filters, and every ranking is fused into one. With no
// model and no also, it is exactly index's Search. The Results' Notice
// says why meaning took no part, when it did not.
func (s *Searcher) Search(ctx context.Context, q index.Query, also []string) (*index.Results, error) {
	if q.Limit <= 0 {
		q.Limit = 10
	}
	q.Limit = min(q.Limit, 10000)
	free, filters := splitQuery(q.Text)
	alts := alternatives(q.Text, also)
	p, _, _, offNotice := s.model()
	if notice := offNotice; p == nil && len(alts) == 0 {
		// No model: exactly the word search.
		res, err := s.ix.Search(ctx, q)
		if err != nil {
			return nil, err
		}
		res.Notice = notice
		return res, nil
	}

	type meant struct {
		hits   [][]index.Hit
		notice string
	}
	depth := s.opts.Depth
	if depth <= 0 {
		depth = max(3*q.Limit, 30)
	}
	texts := []string{}
	if strings.TrimSpace(free) != "" {
		texts = append(texts, free)
	}
	texts = append(texts, alts...)
	mch := make(chan meant, 1)
	go func() {
		if p == nil { // no model: say so (once), rank by the phrasings' words
			mch <- meant{nil, offNotice}
			return
		}
		h, n := s.meaning(ctx, texts, depth)
		mch <- meant{h, n}
	}()

	// Every ranking by words gives the fusion limit+10 hits, with
	// snippets for the first limit (what a search by words spends its
	// time on); a hit from further down that the fusion shows gets its
	// snippet afterwards ([Searcher.snippets]). The phrasings' searches
	// run side by side.
	wqs := []index.Query{q}
	for _, a := range alts {
		aq := q
		aq.Text = strings.TrimSpace(a + " " + filters)
		wqs = append(wqs, aq)
	}
	res := make([]*index.Results, len(wqs))
	errs := make([]error, len(wqs))
	var wg sync.WaitGroup
	for i, wq := range wqs {
		wq.Limit, wq.Snippets = wordsDepth(q.Limit), q.Limit
		if i == len(wqs)-1 {
			res[i], errs[i] = s.ix.Search(ctx, wq)
			continue
		}
		wg.Go(func() { res[i], errs[i] = s.ix.Search(ctx, wq) })
	}
	wg.Wait()
	m := <-mch
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(alts) == 0 && len(m.hits) == 0 {
		// Words alone after all (no vectors, or the model failed).
		r := res[0]
		r.Notice = m.notice
		if len(r.Hits) > q.Limit {
			r.Hits = r.Hits[:q.Limit]
		}
		return r, nil
	}
	out, err := s.fuse(ctx, q, filters, res, m.hits, m.notice)
	if err != nil {
		return nil, err
	}
	if !q.NoSnippets {
		s.snippets(ctx, out.Hits, wqs)
	}
	return out, nil
}

// snippets gives a snippet to each hit that the fusion shows without
// one (found by words below the ranks that got snippets), the one the
// search by words that found it shows (wqs[0] the query's, then the
// phrasings'): from the index when this process holds it, else by a
// search of the hit's note alone.
func (s *Searcher) snippets(ctx context.Context, hits []index.Hit, wqs []index.Query) {
	for j, wq := range wqs {
		via := ViaWords
		if j > 0 {
			via = ViaAlso
		}
		var missing []int
		var need []index.Hit
		for i, h := range hits {
			if h.Snippet == "" && h.Match != MatchMeaning && slices.Contains(h.Via, via) {
				missing = append(missing, i)
				need = append(need, h)
			}
		}
		if len(need) == 0 {
			continue
		}
		if local, err := s.ix.Snippets(ctx, wq, need); local && err == nil {
			for k, i := range missing {
				hits[i].Snippet = need[k].Snippet
			}
			continue
		}
		for _, i := range missing {
			h := &hits[i]
			wq.PathPrefix, wq.Limit, wq.Snippets = h.Path, 50, 0
			r, err := s.ix.Search(ctx, wq)
			if err != nil {
				continue
			}
			for _, x := range r.Hits {
				if key(x) == key(*h) && x.Line == h.Line {
					h.Snippet = x.Snippet
					break
				}
			}
		}
	}
}

// wordsDepth is how many hits a ranking by words gives the fusion.
func wordsDepth(limit int) int { return min(limit+10, 10000) }

// fuse makes one ranking of the words' (res), the also phrasings' and
// meaning's.
func (s *Searcher) fuse(ctx context.Context, q index.Query, filters string, res []*index.Results, meaning [][]index.Hit, notice string) (*index.Results, error) {
	rs := []ranking{{via: ViaWords, hits: res[0].Hits, pin: true}}
	for _, r := range res[1:] {
		rs = append(rs, ranking{via: ViaAlso, hits: r.Hits, pin: true})
	}
	if len(meaning) > 0 {
		ok, err := s.allowed(ctx, q, filters)
		if err != nil {
			return nil, err
		}
		for _, hits := range meaning {
			kept := hits[:0:0]
			for _, h := range hits {
				if ok(h.Path) {
					kept = append(kept, h)
				}
			}
			rs = append(rs, ranking{via: ViaMeaning, hits: kept})
		}
	}
	hits := fuseRankings(rs, q.Limit)
	out := &index.Results{Query: res[0].Query, Total: max(res[0].Total, uint64(len(hits))), TotalCapped: res[0].TotalCapped, Hits: hits, Notice: notice}
	for _, r := range res {
		out.CatchingUp = out.CatchingUp || r.CatchingUp
	}
	return out, nil
}

// fuseRankings is reciprocal-rank fusion of rankings, the best limit hits first:
// a hit's score is the sum over the rankings holding it of 1/(RRFK+rank).
// Hits of a pinned ranking whose Match is title-phrase come first
// (the first ranking's, then the next's), in their ranking's order. A hit
// is shown as the first ranking holding it has it; Via lists the
// rankings that found it and Score is the fused score.
func fuseRankings(rs []ranking, limit int) []index.Hit {
	type entry struct {
		hit   index.Hit
		score float64
		pin   int // 0: not pinned; else the order pinned in, from 1
		order int // first seen
		via   []string
	}
	byKey := map[string]*entry{}
	var all []*entry
	pins := 0
	for _, r := range rs {
		for rank, h := range r.hits {
			k := key(h)
			e := byKey[k]
			if e == nil {
				e = &entry{hit: h, order: len(all)}
				byKey[k] = e
				all = append(all, e)
			}
			e.score += 1 / float64(RRFK+rank+1)
			if !slices.Contains(e.via, r.via) {
				e.via = append(e.via, r.via)
			}
			if r.pin && e.pin == 0 && h.Match == index.MatchTitlePhrase {
				pins++
				e.pin = pins
			}
		}
	}
	less := func(a, b *entry) bool {
		switch {
		case a.pin != 0 || b.pin != 0:
			if a.pin == 0 || b.pin == 0 {
				return a.pin != 0
			}
			return a.pin < b.pin
		case a.score != b.score:
			return a.score > b.score
		}
		return a.order < b.order
	}
	slices.SortStableFunc(all, func(a, b *entry) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
	out := make([]index.Hit, 0, min(limit, len(all)))
	for _, e := range all {
		if len(out) == limit {
			break
		}
		h := e.hit
		h.Score = math.Round(e.score*1e6) / 1e6
		h.Via = e.via
		out = append(out, h)
	}
	return out
}

// key is what makes two hits of two rankings the same: a note by its
// path, a log entry or decision by its path and line.
func key(h index.Hit) string {
	if h.Kind == index.KindNote || h.Kind == "" {
		return "n:" + h.Path
	}
	return fmt.Sprintf("%s:%s#%d", h.Kind, h.Path, h.Line)
}

// meaning ranks notes by meaning for each text: one list per text, best
// first, a note once (at its best section). It never fails: a missing
// model, a failing or slow one, returns no lists and a notice.
func (s *Searcher) meaning(ctx context.Context, texts []string, depth int) ([][]index.Hit, string) {
	p, st, heads, notice := s.model()
	if p == nil || len(texts) == 0 {
		return nil, notice
	}
	if st.Status().Model == "" {
		return nil, "words only: no section is embedded yet; run 'nexus index embed'"
	}
	var send []string
	for _, t := range texts {
		if p.Remote() {
			out, redacted, ok := embed.Outbound(t)
			if !ok || redacted {
				continue // a secret in the query: never sent
			}
			t = out
		}
		send = append(send, t)
	}
	if len(send) == 0 {
		return nil, "words only: the query holds what the security scan refuses to send to the embedding endpoint"
	}
	budget := s.opts.Budget
	if budget <= 0 {
		budget = s.v.Config().Search.Embeddings.QueryBudget()
	}
	bctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	vecs, err := embedBounded(bctx, p, send)
	if err == nil && len(vecs) != len(send) {
		err = &embed.Error{Provider: "embed", Kind: embed.ErrMalformed, Detail: fmt.Sprintf("%d vectors for %d queries", len(vecs), len(send))}
	}
	if err != nil {
		return nil, embed.Notice(err)
	}
	if st.Status().Model != p.Model() {
		return nil, embed.Notice(&embed.Error{Provider: "embed", Kind: embed.ErrOtherModel, Detail: "run 'nexus index embed' to embed the notes with the configured model"})
	}
	var lists [][]index.Hit
	for _, v := range vecs {
		found, err := st.Search(v, depth*4)
		if err != nil {
			return nil, embed.Notice(err)
		}
		var hits []index.Hit
		seen := map[string]bool{}
		for _, f := range found {
			if seen[f.Path] || len(hits) == depth {
				continue
			}
			seen[f.Path] = true
			r := heads[f.Path+"#"+itoa(f.Line)]
			hits = append(hits, index.Hit{
				Path: f.Path, Line: f.Line, EndLine: r.EndLine, Title: noteTitle(f.Path),
				Score: float64(f.Score), Match: MatchMeaning, Snippet: r.Head, Kind: index.KindNote,
			})
		}
		lists = append(lists, hits)
	}
	return lists, ""
}

// embedBounded is p.Embed that returns when ctx is done even if p does
// not (a provider stuck past its own timeout never holds a search).
func embedBounded(ctx context.Context, p embed.Provider, texts []string) ([][]float32, error) {
	type answer struct {
		v   [][]float32
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := p.Embed(ctx, texts)
		ch <- answer{v, err}
	}()
	select {
	case a := <-ch:
		return a.v, a.err
	case <-ctx.Done():
		return nil, &embed.Error{Provider: "embed", Kind: embed.ErrTimeout, Detail: "no query embedding within search.embeddings.query_timeout", Err: ctx.Err()}
	}
}

// model returns the provider, the store with the last run's sections,
// and their heads by "path#line"; or a nil provider and the notice.
func (s *Searcher) model() (embed.Provider, *embed.Store, map[string]record, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg := s.v.Config().Search.Embeddings
	p := s.opts.Provider
	if p == nil {
		if !cfg.Enabled() {
			return nil, nil, nil, s.offNotice()
		}
		if s.p == nil && s.perr == nil || cfg != s.cfg {
			s.cfg = cfg
			s.p, s.perr = embed.New(cfg, s.v.Root())
		}
		if s.perr != nil {
			return nil, nil, nil, embed.Notice(s.perr)
		}
		p = s.p
	}
	if s.st == nil {
		st, err := embed.OpenStore(s.v)
		if err != nil {
			return nil, nil, nil, embed.Notice(err)
		}
		s.st = st
	}
	if err := s.loadSections(); err != nil {
		return nil, nil, nil, "words only: " + err.Error()
	}
	return p, s.st, s.heads, ""
}

// loadSections gives the store the sections of the last embedding run,
// when SectionsFile changed since it was last read. s.mu is held.
func (s *Searcher) loadSections() error {
	fi, err := vault.Stat(sidecarPath(s.v))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", SectionsFile, err)
	}
	now := stamp{fi.Size(), fi.ModTime()}
	if now == s.seen {
		return s.st.Refresh()
	}
	sc, ok, err := readSidecar(sidecarPath(s.v))
	if err != nil || !ok {
		return err
	}
	secs, keys := sc.sections()
	if err := s.st.Use(secs, keys); err != nil {
		return err
	}
	s.heads = make(map[string]record, len(sc.Sections))
	for _, r := range sc.Sections {
		s.heads[r.Path+"#"+itoa(r.Line)] = r
	}
	s.seen = now
	return nil
}

// offNotice is OffNotice the first time this vault's searches run
// without a model (a marker file in .nexus/index/ remembers), else "".
// s.mu is held.
func (s *Searcher) offNotice() string {
	notice := ""
	s.offOnce.Do(func() {
		marker := filepath.Join(s.v.MustPath(vault.IndexDir), offMarker)
		if _, err := vault.Stat(marker); err == nil {
			return
		}
		if f, err := vault.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
			f.Close()
			notice = OffNotice
		}
	})
	return notice
}

// allowed returns whether a note found by meaning alone passes q's
// filters: the path prefix; and the other filters (agent, type, tag,
// dates, and those written in the query: tag:, path:, "a phrase", -word)
// by a search of the filters alone.
func (s *Searcher) allowed(ctx context.Context, q index.Query, filters string) (func(string) bool, error) {
	prefix := q.PathPrefix
	if filters == "" && q.Agent == "" && q.Type == "" && q.Tag == "" && q.Since.IsZero() && q.Until.IsZero() {
		return func(p string) bool { return strings.HasPrefix(p, prefix) }, nil
	}
	fq := q
	fq.Text, fq.Limit, fq.NoSnippets, fq.MinScore = filters, 10000, true, 0
	res, err := s.ix.Search(ctx, fq)
	if err != nil {
		return nil, err
	}
	in := map[string]bool{}
	for _, h := range res.Hits {
		in[h.Path] = true
	}
	return func(p string) bool { return in[p] }, nil
}

// splitQuery cuts a query's text into its free words (what meaning is
// asked about: plain words, and the words of "phrases") and its filters
// (everything else: field:value, -excluded, #tag, "phrases", which a hit
// found by meaning must also satisfy).
func splitQuery(text string) (free, filters string) {
	var fw, ft []string
	for _, tok := range tokens(text) {
		low := strings.ToLower(tok)
		switch {
		case strings.HasPrefix(tok, `"`):
			fw = append(fw, strings.Trim(tok, `"`))
			ft = append(ft, tok)
		case strings.HasPrefix(tok, "-") && len(tok) > 1, strings.HasPrefix(tok, "#") && len(tok) > 1:
			ft = append(ft, tok)
		case hasField(low):
			ft = append(ft, tok)
		default:
			fw = append(fw, tok)
		}
	}
	return strings.Join(fw, " "), strings.Join(ft, " ")
}

func hasField(low string) bool {
	for _, f := range []string{"title:", "tag:", "path:", "agent:", "type:", "prop:"} {
		if strings.HasPrefix(low, f) {
			return true
		}
	}
	return false
}

// tokens splits text at spaces outside double quotes.
func tokens(text string) []string {
	text = strings.NewReplacer("“", `"`, "”", `"`, "„", `"`).Replace(text)
	var out []string
	var b strings.Builder
	quoted := false
	for _, r := range text {
		switch {
		case r == '"':
			quoted = !quoted
			b.WriteRune(r)
		case unicode.IsSpace(r) && !quoted:
			if b.Len() > 0 {
				out = append(out, b.String())
				b.Reset()
			}
		default:
			b.WriteRune(r)
		}
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// alternatives are also's phrasings, trimmed, without blanks, repeats
// and the query itself, at most MaxAlso.
func alternatives(query string, also []string) []string {
	seen := map[string]bool{strings.ToLower(strings.TrimSpace(query)): true}
	var out []string
	for _, a := range also {
		a = strings.TrimSpace(a)
		k := strings.ToLower(a)
		if a == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, a)
		if len(out) == MaxAlso {
			break
		}
	}
	return out
}

// noteTitle is a note's file name without its folder and extension: one
// of its titles (SPEC §5).
func noteTitle(p string) string {
	b := path.Base(p)
	return strings.TrimSuffix(b, path.Ext(b))
}

func itoa(n int) string { return fmt.Sprint(n) }
