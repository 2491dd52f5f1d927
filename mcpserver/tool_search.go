package mcpserver

import (
	"context"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/embed"
	"github.com/nexus-memory/nexus/hybrid"
	"github.com/nexus-memory/nexus/index"
)

func (s *Server) searchTool() tool {
	return tool{
		def: newTool("memory_search", `Search the whole shared vault — notes, projects, every agent's facts and memory, the live log and decisions — ranked by how the words match (as the title, side by side, in the title, in a heading or tag, elsewhere) and then by relevance (TF-IDF), Korean and other CJK text included.

Use it before answering from memory or asking the user something the vault may already know. Then read a hit with memory_get (path, from = its line).
also takes up to 8 other phrasings of the same question, each searched too and all fused into one ranking: pass them when the words may not be the vault's — synonyms ("undo" / "revert" / "version history"), the question in the vault's other language (Korean and English), a paraphrase. With an embedding model configured, notes are ranked by meaning as well (a hit found by meaning alone has match "meaning"); a note whose title is the query stays first.
query takes plain words (every word must match; if no document has them all, any may), "exact phrases", title:word, -excluded, and inline filters tag:T path:P agent:A type:T. Filters can also be passed as arguments. maxResults (or limit) caps the hits (default 10); minScore (or min_score) drops weak ones.
Returns {query, total, total_capped, hits: [{path, line, end_line, title, heading, score, match, snippet, kind, agent, type, date, via}], notice}: total counts matches up to 1000 or the limit (total_capped: there are more); match is title-phrase, title-words, together, title, heading, words or meaning; score compares hits of the same match (in a fused search it is the fused score); via lists the rankings that found a hit (words, also, meaning) when several were fused; notice says why meaning took no part; snippets wrap matched words in ** **; catching_up: the index is still catching up after its holder started, so search again in a moment if a recent change is missing.`,
			objectSchema(fields{
				{"query", strLen("What to look for.", 1, 1000)},
				{"also", prop{"type": "array", "items": strLen("Another phrasing of the same question.", 0, 1000), "maxItems": hybrid.MaxAlso,
					"description": "Other phrasings of the same question (synonyms, the vault's other language, a paraphrase), fused with the query into one ranking."}},
				{"maxResults", intRange("Most hits to return (default 10, at most 100).", 1, 100)},
				{"limit", intRange("Same as maxResults.", 1, 100)},
				{"minScore", numProp("Drop hits scoring below this.")},
				{"min_score", numProp("Same as minScore.")},
				{"agent", strLen("Only notes of this agent (its home) and its log entries.", 0, maxAgentName)},
				{"type", strProp("Only facts of this type (user, feedback, project, reference) or notes with this frontmatter type.")},
				{"tag", strProp("Only notes with this tag.")},
				{"path", strProp(`Only paths under this vault-relative prefix, e.g. "projects/".`)},
				{"since", strLen("Only documents dated on or after this day (YYYY-MM-DD or RFC 3339).", 0, 64)},
				{"until", strLen("Only documents dated on or before this day (YYYY-MM-DD or RFC 3339).", 0, 64)},
			}, "query"),
			hints{title: "Search the vault", readOnly: true, idempotent: true}),
		run: s.memorySearch,
	}
}

func (s *Server) memorySearch(ctx context.Context, c *call) (any, error) {
	q := index.Query{
		Text:       c.str("query", true),
		Limit:      c.integer(c.first("maxResults", "limit"), 10, 1, 100),
		MinScore:   c.number(c.first("minScore", "min_score"), 0),
		Agent:      strings.TrimSpace(c.str("agent", false)),
		Type:       strings.TrimSpace(c.str("type", false)),
		Tag:        strings.TrimSpace(c.str("tag", false)),
		PathPrefix: strings.TrimSpace(c.str("path", false)),
	}
	q.Since = c.date("since", false)
	q.Until = c.date("until", true)
	also := c.strs("also")
	if c.err != nil {
		return nil, c.err
	}
	ix, err := s.searchIndex()
	if err != nil {
		return nil, err
	}
	res, err := s.hybridSearcher(ix).Search(ctx, q, also)
	if err == nil {
		recordHits(s, c.agent, q.Text, res)
	}
	return res, err
}

// hybridSearcher returns the server's Searcher over ix, making it on first
// use; then, when an embedding model is configured, it also starts keeping
// the vectors in step with the notes (see keepEmbeddings).
func (s *Server) hybridSearcher(ix *index.Index) *hybrid.Searcher {
	if hs, ok := s.searchers.Load(ix); ok {
		return hs.(*hybrid.Searcher)
	}
	hs, loaded := s.searchers.LoadOrStore(ix, hybrid.NewSearcher(s.vault(), ix, hybrid.Options{}))
	if !loaded && s.vault().Config().Search.Embeddings.Enabled() {
		s.mu.Lock()
		if !s.closing { // Close waits for loops only after setting closing
			s.loops.Add(1)
			go func() {
				defer s.loops.Done()
				defer s.searchers.Delete(ix)
				hybrid.Keep(s.ctx, s.vault(), ix, func(err error) {
					s.log.Warn("embed sections for search by meaning", "err", embed.Notice(err))
				})
			}()
		}
		s.mu.Unlock()
	}
	return hs.(*hybrid.Searcher)
}

// recordHits records a search and its hits as a recall signal
// (docs/curation.md): a hit read next counts with this query.
func recordHits(s *Server, agent, query string, res *index.Results) {
	agents.RecordHits(s.vault(), agent, query, "mcp", res.RecallPaths())
}

// date parses a day or an RFC 3339 time; endOfDay makes a bare day mean
// its last instant.
func (c *call) date(name string, endOfDay bool) time.Time {
	s := strings.TrimSpace(c.str(name, false))
	if s == "" {
		return time.Time{}
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		c.fail("argument %q must be a date YYYY-MM-DD or an RFC 3339 time, got %q", name, truncate(s, 40))
		return time.Time{}
	}
	if endOfDay {
		t = t.Add(24*time.Hour - time.Nanosecond)
	}
	return t
}
