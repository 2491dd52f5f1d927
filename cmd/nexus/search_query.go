package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/index/holder"
	"github.com/nexus-memory/nexus/vault"
)

// What both builds share of 'nexus search': the full build (cmd_search.go)
// opens the index or asks its holder; the lean build (search_lite.go) asks
// a running holder itself and hands every other case to the full nexus.

// searchFlags are the command line of 'nexus search'.
type searchFlags struct {
	limit    int
	minScore float64
	typ      string
	tag      string
	path     string
	since    string
	until    string
	by       string
	hold     string
	also     []string // --also: alternative phrasings, fused (package hybrid)
	// words are the query's arguments; agentGiven says --agent was given
	// on this command line (only then does it filter).
	words      []string
	agentGiven bool
}

// defaultHold is how long the holder that 'nexus search' starts stays
// after the last search; --hold, $NEXUS_SEARCH_HOLD and search.hold in
// config.yaml override it.
const defaultHold = 10 * time.Minute

// holdSetting is how long a search's background holder stays: --hold,
// else $NEXUS_SEARCH_HOLD, else search.hold in config.yaml, else
// defaultHold. explicit reports that one of those was set, which lets a
// non-interactive run start a holder.
func holdSetting(flag string, cfg vault.Config) (d time.Duration, explicit bool, err error) {
	s, from := flag, "--hold"
	if s == "" {
		s, from = os.Getenv("NEXUS_SEARCH_HOLD"), "NEXUS_SEARCH_HOLD"
	}
	if s == "" {
		s, from = cfg.Search.Hold, "search.hold in .nexus/config.yaml"
	}
	if s == "" {
		return defaultHold, false, nil
	}
	if s == "0" || s == "off" {
		return 0, true, nil
	}
	d, err = time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, true, usagef("%s %q: want a duration such as 10m, or 0 (or off) to start no holder", from, s)
	}
	return d, true, nil
}

// query is the search o's command line asks for.
func (o searchFlags) query(g *globals) (holder.Query, error) {
	q := holder.Query{Text: strings.Join(o.words, " "), Limit: o.limit, MinScore: o.minScore, Type: o.typ, Tag: o.tag, PathPrefix: o.path, Agent: o.by}
	if o.agentGiven && q.Agent == "" {
		q.Agent = g.agent
	}
	var err error
	if q.Since, err = parseDateFlag("--since", o.since, false); err != nil {
		return q, err
	}
	if q.Until, err = parseDateFlag("--until", o.until, true); err != nil {
		return q, err
	}
	if o.limit < 0 {
		return q, usagef("--limit must be positive")
	}
	return q, nil
}

// checkAgent: --agent names an agent, so a typo must not read as "no
// matches". (--by filters by any author a note names.)
func (o searchFlags) checkAgent(g *globals, v *vault.Vault, q holder.Query) error {
	if q.Agent != "" && q.Agent == g.agent && o.by == "" {
		return knownAgent(v, q.Agent)
	}
	return nil
}

// recordSearch records an agent's search and its hits as a recall signal
// (docs/curation.md); a person's search (no agent) records nothing.
func recordSearch(g *globals, v *vault.Vault, query string, res *holder.Results) {
	agent, err := g.agentName()
	if err != nil || res == nil {
		return
	}
	agents.RecordHits(v, agent, query, "cli", res.RecallPaths())
	agents.FlushRecall()
}

func printHits(out io.Writer, res *holder.Results) {
	// One write, not three a hit: a search a holder answers takes a few
	// milliseconds, and thirty small writes to a pipe or terminal were a
	// visible part of them on a loaded machine.
	w := bufio.NewWriter(out)
	defer w.Flush()
	defer func() {
		if res.CatchingUp {
			fmt.Fprintln(w, "\nThe index is still catching up with the vault (its holder just started): files changed while no holder ran may be missing; search again in a moment.")
		}
	}()
	if len(res.Hits) == 0 {
		fmt.Fprintf(w, "No matches for %q.\n", res.Query)
		return
	}
	for i, h := range res.Hits {
		if i > 0 {
			fmt.Fprintln(w)
		}
		title := h.Title
		if h.Heading != "" && h.Heading != h.Title {
			title += " › " + h.Heading
		}
		how := fmt.Sprintf("%.2f", h.Score)
		if h.Match != "" {
			how = h.Match + " " + how
		}
		fmt.Fprintf(w, "%s:%d  %s  (%s)\n", h.Path, h.Line, title, how)
		if h.Snippet != "" {
			fmt.Fprintf(w, "    %s\n", h.Snippet)
		}
	}
	switch {
	case res.TotalCapped:
		fmt.Fprintf(w, "\n%d of more than %d matches; --limit shows more.\n", len(res.Hits), res.Total)
	case uint64(len(res.Hits)) < res.Total:
		fmt.Fprintf(w, "\n%d of %d matches; --limit shows more.\n", len(res.Hits), res.Total)
	}
}
