//go:build !lite

package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/hybrid"
	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/vault"
)

func init() { register("search", newSearchCmd) }

// searchOptions are the flags of 'nexus search' and, in this build, what
// decides about the background holder.
type searchOptions struct {
	searchFlags
	// holder decides about the background holder; its zero funcs take
	// the defaults (tests replace them).
	holder holderPolicy
}

func newSearchCmd(g *globals) *cobra.Command {
	var o searchOptions
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Ranked search over the whole vault (English, Korean and other CJK)",
		Long: `Search every note, live-log entry and decision of the vault, best first;
a note is one hit. Each hit shows path:line (where its best section starts),
the title, how it matched, the score and a snippet with the matched words in
** **.

Query syntax:
  staging ssh port     plain words: notes holding every word (if none does,
                       notes holding some), ranked by how they match:
                         title-phrase  the words are the title, the file
                                       name or an alias (or a phrase of one)
                         title-words   every word in the title, file name
                                       or an alias
                         together      two query words side by side
                         title         a word in the title, file name or alias
                         heading       a word in a heading or a tag
                         words         the words, elsewhere
                       then by score (which compares hits of one kind)
  "exact phrase"       must appear as written
  title:staging        must match the title or an alias (title:"two words")
  deploy -docker       must not contain docker (also -"a phrase")
  tag:infra path:projects/ agent:lyra type:feedback   inline filters
  #to-read             the tag to-read, as tag:to-read
  prop:author:"Ada Lovelace"   the frontmatter property author holds these
                       words (links count as their text); prop:reviewer:
                       the note has the property; -prop:status:draft: not

Frontmatter property values are searchable text too, so a note whose
author is [[Ada Lovelace]] is found by "Ada Lovelace". Korean compounds
find each other with and without the space (시간초과, 시간 초과), and a
particle or ending on a query word is not needed in the note (지역은 finds
지역을; the list is in docs/search.md).

Filters: --type, --tag, --path (a path prefix), --since/--until (2026-11-01,
2026-11-01T10:30 or RFC 3339, inclusive; see docs/cli.md; the date is the
note's updated/date/created property, a log entry's time, else the file's
mtime). To filter by agent pass --agent
NAME explicitly on this command line (or --by NAME, or agent:NAME): the
global --agent names the acting agent elsewhere, so $NEXUS_AGENT alone never
filters a search.

The index lives in .nexus/index/ and is brought up to date before answering.
If 'nexus watch', 'nexus serve' or 'nexus index hold' is running, that
process answers (no lock errors, current results, a few milliseconds).
Otherwise this process opens the index and checks every file for changes
(about 0.3 s for 100,000 notes) and answers. Run on a terminal, it then
starts 'nexus index hold' in the background so that the next searches are
fast (it says so once, the first time); the holder exits after --hold
(10 minutes) without a search, or at 'nexus index hold --stop'. A script or
CI run (stderr not a terminal) starts no holder unless --hold,
$NEXUS_SEARCH_HOLD or search.hold in .nexus/config.yaml sets a duration;
0 or off in any of them turns it off.

With much to index (no index yet on a big vault), a search indexes for
about 1.5 s, newest notes first, answers from what is indexed, says it is
still indexing, and leaves the rest to the background holder, which it
starts then from a script too. With the hold 0 or off it indexes
everything before answering.

A read-only vault (its .nexus/ cannot be written: a read-only mount, another
user's copy) is searched all the same and nothing is written: from the index
on disk when no file changed since it was built, else from one built in memory
for this search (it says so on stderr; slow on a big vault). No holder starts.

By meaning: with an embedding model configured under search.embeddings in
.nexus/config.yaml (docs/embeddings.md) and the notes embedded ('nexus index
embed'), notes are ranked by meaning too and the two rankings fused into one
(reciprocal-rank fusion); a note the query names (match title-phrase) stays
first. A hit found by meaning alone shows match "meaning"; in a fused search
score is the fused score and --json's "via" lists the rankings that found each
hit (words, also, meaning). Without a model, or when it fails or is slow (2s,
search.embeddings.query_timeout), the search is by words and says why once on
stderr ("notice" in --json).

--also "another phrasing" (repeatable) searches alternative phrasings of the
same question too and fuses them into one ranking: synonyms, the question in
the vault's other language, a paraphrase.

Examples:
  nexus search "staging ssh port"
  nexus search "undo a change" --also "revert an edit" --also "되돌리기"
  nexus search "배포 실패" --limit 5
  nexus search deploy --agent lyra --type feedback --tag infra --path projects/ --since 2026-10-01
  nexus search '"exact phrase"' --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.words, o.agentGiven = args, cmd.Flags().Changed("agent")
			return runSearch(g, o)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&o.limit, "limit", "n", 10, "most hits to show")
	f.Float64Var(&o.minScore, "min-score", 0, "drop hits scoring below this")
	f.StringVar(&o.typ, "type", "", "only notes with this frontmatter type (user, feedback, project, reference, log, decision, …)")
	f.StringVar(&o.tag, "tag", "", "only notes with this tag (nested tags: a/b)")
	f.StringVar(&o.path, "path", "", "only paths starting with this prefix (projects/)")
	f.StringVar(&o.since, "since", "", "only documents dated on or after this: "+dateHelp)
	f.StringVar(&o.until, "until", "", "only documents dated on or before this (a plain date: through its end): "+dateHelp)
	f.StringVar(&o.by, "by", "", "only documents written by this agent (same as an explicit --agent here)")
	f.StringArrayVar(&o.also, "also", nil, "another phrasing of the same question (repeatable, at most 8): synonyms, the vault's other language, a paraphrase; each is searched too and all are fused into one ranking")
	f.StringVar(&o.hold, "hold", "", "when this search has to open the index itself, keep it open in a background 'nexus index hold' for this long after the last search (default $NEXUS_SEARCH_HOLD, else search.hold in config.yaml, else 10m on a terminal and none from scripts; 0 = none)")
	return cmd
}

// openIndex opens the vault's index: the holder's if one runs, else this
// process's own, brought up to date with the files first.
func openIndex(g *globals, v *vault.Vault, catchUp bool) (*index.Index, error) {
	ix, _, err := openIndexWithin(g, v, catchUp, 0)
	return ix, err
}

// searchIndexBudget is how long a search that opened the index itself
// indexes before it answers from what is indexed (issue 32: within 3 s
// on a 10,000-note vault with no index), leaving the rest to a
// background holder.
const searchIndexBudget = 1500 * time.Millisecond

// openIndexWithin is openIndex whose catch-up stops after budget (0: none)
// with the files read so far indexed; last is the catch-up's last
// progress, whose Done is short of Total when it stopped.
func openIndexWithin(g *globals, v *vault.Vault, catchUp bool, budget time.Duration) (_ *index.Index, last index.Progress, _ error) {
	ix, err := index.Open(v, index.Options{})
	if err != nil {
		return nil, last, err
	}
	if catchUp && !ix.Remote() {
		// A first search on a big vault indexes it all: show progress
		// when there is a lot to do.
		bar := newProgressBar(g.stderr)
		gc := sparseGC()
		// Indexing is held to the default budget's heap cap, as
		// 'nexus index rebuild' is (a pasted note of megabytes, the
		// collector's headroom doubling it, went past it).
		if heapCap := int64(index.DefaultMemoryBudget * 3 / 4); debug.SetMemoryLimit(-1) > heapCap {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(heapCap))
		}
		progress := func(p index.Progress) {
			gc.restore() // indexing: memory matters more than the collector's CPU
			last = p
			if p.Total >= 1000 {
				bar.update(p)
			}
		}
		if budget > 0 {
			_, err = ix.SyncFor(g.ctx, budget, progress)
		} else {
			err = ix.SyncProgress(g.ctx, progress)
		}
		bar.done()
		if err != nil {
			ix.Close()
			return nil, last, err
		}
	}
	return ix, last, nil
}

// sparseGC makes the garbage collector run less often (GOGC 400) until
// restore, unless GOGC was set. A search that finds the index fresh
// allocates little that stays live (the list of files it checked), and
// with the default the collector took a third of its CPU. Indexing, which
// holds many documents at once, restores the default.
func sparseGC() *gcSetting {
	old := debug.SetGCPercent(400)
	if old != 100 { // GOGC set: keep it
		debug.SetGCPercent(old)
	}
	return &gcSetting{old: old}
}

type gcSetting struct {
	once sync.Once
	old  int
}

func (s *gcSetting) restore() { s.once.Do(func() { debug.SetGCPercent(s.old) }) }

func runSearch(g *globals, o searchOptions) error {
	q, err := o.query(g)
	if err != nil {
		return err
	}
	v, err := g.openVault()
	if err != nil {
		return err
	}
	if err := o.checkAgent(g, v, q); err != nil {
		return err
	}
	hp := o.holder
	if hp.idle, hp.explicit, err = holdSetting(o.hold, v.Config()); err != nil {
		return err
	}
	if hp.interactive == nil {
		hp.interactive = func() bool { return isTerminal(g.stderr) }
	}
	if hp.start == nil {
		hp.start = startHolder
	}
	// With a holder to leave the rest to, a search on a vault with much
	// to index answers from what is indexed after searchIndexBudget;
	// with none (--hold 0), it waits for the whole catch-up.
	budget := time.Duration(0)
	if hp.idle > 0 {
		budget = searchIndexBudget
	}
	ix, caught, err := openIndexWithin(g, v, true, budget)
	if err != nil {
		return err
	}
	stopped := caught.Total > 0 && caught.Done < caught.Total
	res, err := hybrid.NewSearcher(v, ix, hybrid.Options{}).Search(g.ctx, q, o.also)
	local := !ix.Remote() && !ix.ReadOnly()
	if err == nil && ix.InMemory() {
		fmt.Fprintln(g.stderr, "nexus: the vault's .nexus/index cannot be written and the index there is missing or stale, so this search indexed the vault in memory (slow on a big vault); run 'nexus index rebuild' where the vault is writable to make read-only searches fast again")
	}
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	recordSearch(g, v, q.Text, res)
	if err := g.emit(res, nil, func(w io.Writer) { printHits(w, res) }); err != nil {
		return err
	}
	if res.Notice != "" && !g.json && (res.Notice != hybrid.OffNotice || isTerminal(g.stderr)) {
		// Why meaning took no part: a failure every time; no model
		// configured once per vault, to a person (--json carries it).
		fmt.Fprintln(g.stderr, "nexus: "+res.Notice)
	}
	if local && stopped {
		// The rest of the files are indexed by a holder, scripts
		// included (the hold setting is not 0 here).
		hp.explicit = true
		if !g.json {
			fmt.Fprintf(g.stderr, "nexus: still indexing: these results are from %d of %d changed files; a background 'nexus index hold' indexes the rest, so search again in a moment\n", caught.Done, caught.Total)
		}
	}
	if local {
		// This process had to check every file; a holder spares the
		// next searches that.
		hp.maybeStart(g, v)
	}
	return nil
}
