package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/curator"
)

func init() { register("curator", newCuratorCmd) }

// curatorOptions are the flags of 'nexus curator run'.
type curatorOptions struct {
	dryRun bool
}

func newCuratorCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "curator",
		Short: "See and run the curator: it proposes archive, spill, promote and merge; a person decides",
		Long: `The curator keeps agents' memory useful over months. From recall signals
this machine records (session starts, fact reads, search hits that were
read) it proposes, as review items a person approves or rejects:

  archive   facts no one recalled for curator.archive_days (default 90)
  spill     MEMORY.md/USER.md past curator.pressure_percent (default 80):
            the least-used entries move into fact files, a pointer stays
  promote   facts read after searches from several queries, for MEMORY.md
  merge     facts of one agent that say nearly the same thing (shingle
            similarity at least curator.merge_percent, default 70): one is
            kept with the others' distinct lines, the others are archived

Nothing is applied by the curator itself. 'nexus serve' and 'nexus watch'
run a pass every curator.every_hours (default 24) when the vault is idle;
the first waits one interval after the curator first sees the vault, so
you can pin facts first ('nexus fact pin'). See docs/curation.md.

Example:
  nexus curator status
  nexus curator run --dry-run`,
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Per agent: memory pressure, facts by state, waiting proposals, what a pass would do",
		Long: `Show, per agent (--agent NAME for one): MEMORY.md and USER.md usage, facts
by state (active, stale, due for archive, pinned), facts archived so far,
curator proposals waiting for review, and what a pass run now would
propose (computed, not filed).

Example:
  nexus curator status
  nexus --agent lyra --json curator status`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runCuratorStatus(g) },
	}
	var o curatorOptions
	run := &cobra.Command{
		Use:   "run [--dry-run]",
		Short: "Run one pass: snapshot first, then file proposals in review/pending/",
		Long: `Run one curator pass now (for every agent, or --agent NAME): take a
snapshot of every file the proposals would change, file each proposal in
review/pending/ with its evidence (counts, dates, queries) and exact diff,
and write a diary note in review/curator/PASS.md. Nothing is applied: a
person approves or rejects each proposal ('nexus review'). A pass never
proposes archiving more than a quarter of an agent's facts, nor moving more
than a quarter of a memory file's entries. --dry-run prints what it would
propose and writes nothing.

Example:
  nexus curator run --dry-run
  nexus curator run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runCurator(g, o) },
	}
	run.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the proposals; write nothing")
	cmd.AddCommand(status, run)
	return cmd
}

// curatorAgent is --agent or $NEXUS_AGENT, "" for every agent.
func curatorAgent(g *globals) string {
	if g.agent != "" {
		return g.agent
	}
	return os.Getenv("NEXUS_AGENT")
}

func runCuratorStatus(g *globals) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	res, err := curator.Status(v, curatorAgent(g), g.now())
	if err != nil {
		return err
	}
	return g.emit(res, nil, func(w io.Writer) {
		last := "never"
		if !res.LastPass.IsZero() {
			last = fmtDate(res.LastPass)
		}
		c := res.Config
		fmt.Fprintf(w, "Curator watching since %s; last pass %s; next automatic pass after %s (from serve/watch, when the vault is idle)\n",
			fmtDate(res.Installed), last, fmtDate(res.NextPass))
		fmt.Fprintf(w, "Stale after %d days without recall, archive proposed after %d; spill at %d%%; promote at %d search reads from %d queries; merge at %d%% similar\n\n",
			c["stale_days"], c["archive_days"], c["pressure_percent"], c["promote_recalls"], c["promote_queries"], c["merge_percent"])
		if len(res.Agents) == 0 {
			fmt.Fprintln(w, "No agents yet: add one with 'nexus agent add NAME --role \"...\"'.")
			return
		}
		var tb table
		tb.row("AGENT", "MEMORY", "USER", "ACTIVE", "STALE", "DUE", "PINNED", "ARCHIVED", "WAITING")
		for _, a := range res.Agents {
			tb.row(a.Agent, pressureCell(a.Memory), pressureCell(a.User), strconv.Itoa(a.Facts[curator.StateActive]), strconv.Itoa(a.Facts[curator.StateStale]),
				strconv.Itoa(a.Facts[curator.StateArchive]), strconv.Itoa(a.Facts[curator.StatePinned]), strconv.Itoa(a.Archived), strconv.Itoa(len(a.Waiting)))
		}
		tb.write(w)
		for _, a := range res.Agents {
			for _, it := range a.Waiting {
				fmt.Fprintf(w, "  waiting: %s  %s  %s  %s\n", it.ID, it.Agent, it.Kind, it.Summary())
			}
		}
		if len(res.WouldDo) == 0 {
			fmt.Fprintln(w, "\nA pass now would propose nothing.")
			return
		}
		fmt.Fprintln(w, "\nA pass now would propose ('nexus curator run' files them):")
		for _, p := range res.WouldDo {
			fmt.Fprintf(w, "  %s  %s  %s\n", p.Agent, p.Kind, p.Summary)
		}
	})
}

func pressureCell(p curator.Pressure) string {
	s := strings.SplitN(p.Usage, " ", 2)[0]
	if p.Over {
		s += " !"
	}
	return s
}

func runCurator(g *globals, o curatorOptions) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	res, err := curator.Run(v, curator.PassOptions{Now: g.now(), DryRun: o.dryRun, Agent: curatorAgent(g)})
	if err != nil {
		return err
	}
	return g.emit(res, nil, func(w io.Writer) {
		switch {
		case o.dryRun && len(res.Proposals) == 0:
			fmt.Fprintln(w, "Dry run: a pass now would propose nothing.")
		case o.dryRun:
			fmt.Fprintf(w, "Dry run: a pass now would propose %s; nothing was written.\n", plural(len(res.Proposals), "change", "changes"))
		case len(res.Proposals) == 0:
			fmt.Fprintf(w, "Pass %s: nothing to propose (diary %s).\n", res.ID, res.Diary)
		default:
			fmt.Fprintf(w, "Pass %s: %s for review (snapshot %s, diary %s).\n", res.ID, waiting(len(res.Proposals)), res.Snapshot, res.Diary)
		}
		for _, p := range res.Proposals {
			id := p.ID
			if id == "" {
				id = "-"
			}
			fmt.Fprintf(w, "\n%s  %s  %s  %s\n", id, p.Agent, p.Kind, p.Summary)
			for _, e := range p.Evidence {
				fmt.Fprintf(w, "  - %s\n", e)
			}
			if o.dryRun {
				fmt.Fprintf(w, "%s\n", indent(p.Diff, "    "))
			}
		}
		for _, n := range res.Notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
		if !o.dryRun && len(res.Proposals) > 0 {
			fmt.Fprintln(w, "\nA person decides each one: 'nexus review show ID', then 'nexus review approve ID' or 'nexus review reject ID --why ...'.")
		}
	})
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// newFactPinCmds are 'nexus fact pin', 'unpin' and 'stats'.
func newFactPinCmds(g *globals) []*cobra.Command {
	pinCmd := func(pin bool) *cobra.Command {
		use, short, long := "pin SLUG|NAME", "Keep a fact out of the curator's archive proposals (pinned: true)", `Set pinned: true in the fact's frontmatter: the curator never proposes it
for archive. Only that line of the file changes; it syncs with the vault.

Example:
  nexus --agent lyra fact pin staging-ssh`
		if !pin {
			use, short, long = "unpin SLUG|NAME", "Let the curator propose a fact for archive again", `Remove pinned: true from the fact's frontmatter (only that line changes).

Example:
  nexus --agent lyra fact unpin staging-ssh`
		}
		return &cobra.Command{
			Use: use, Short: short, Long: long,
			Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error { return runFactPin(g, pin, args[0]) },
		}
	}
	stats := &cobra.Command{
		Use:   "stats [SLUG|NAME]",
		Short: "How each fact was recalled: when, how, from which queries, and its state",
		Long: `Show the recall signals this machine recorded for the agent's facts: reads
(fact_read, memory_get, 'nexus fact read'), reads that followed a search and
the queries, session starts that listed the fact, when last used, and the
curator state (active, stale, due for archive, pinned). Without SLUG, one
line per fact, most idle first; with SLUG, the details.

Example:
  nexus --agent lyra fact stats
  nexus --agent lyra fact stats staging-ssh --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runFactStats(g, args) },
	}
	return []*cobra.Command{pinCmd(true), pinCmd(false), stats}
}

// runFactPin sets or removes pinned: true in a fact's frontmatter.
func runFactPin(g *globals, pin bool, slug string) error {
	v, agent, err := factSetup(g)
	if err != nil {
		return err
	}
	f, changed, err := agents.PinFact(v, agent, slug, pin)
	if err != nil {
		return err
	}
	res := struct {
		Agent   string `json:"agent"`
		Slug    string `json:"slug"`
		Path    string `json:"path"`
		Pinned  bool   `json:"pinned"`
		Changed bool   `json:"changed"`
	}{agent, f.Slug, f.Path, pin, changed}
	return g.emit(res, nil, func(w io.Writer) {
		state := map[bool]string{true: "pinned", false: "not pinned"}[pin]
		if !changed {
			fmt.Fprintf(w, "%s was already %s; nothing written.\n", f.Slug, state)
			return
		}
		fmt.Fprintf(w, "%s is now %s (%s).\n", f.Slug, state, f.Path)
	})
}

// runFactStats prints the recall signals of one fact (args[0]) or of all.
func runFactStats(g *globals, args []string) error {
	v, agent, err := factSetup(g)
	if err != nil {
		return err
	}
	states, err := curator.FactStates(v, agent, g.now())
	if err != nil {
		return err
	}
	if len(args) == 1 {
		f, err := agents.ReadFact(v, agent, args[0])
		if err != nil {
			return err
		}
		for _, s := range states {
			if s.Slug == f.Slug {
				return g.emit(s, nil, func(w io.Writer) { printFactStats(w, s) })
			}
		}
		return fmt.Errorf("fact %q of %s: %w", args[0], agent, agents.ErrNoFact)
	}
	states = nonNil(states)
	return g.emit(listOf("facts", states), nil, func(w io.Writer) {
		if len(states) == 0 {
			fmt.Fprintf(w, "%s has no facts.\n", agent)
			return
		}
		var tb table
		tb.row("SLUG", "STATE", "IDLE", "READS", "SEARCH", "QUERIES", "LAST USE")
		for _, s := range states {
			tb.row(s.Slug, s.State, strconv.Itoa(s.IdleDays)+"d", strconv.Itoa(s.Use.Reads), strconv.Itoa(s.Use.SearchReads), strconv.Itoa(len(s.Use.Queries)), fmtDate(s.LastUse))
		}
		tb.write(w)
	})
}

func printFactStats(w io.Writer, s curator.FactState) {
	fmt.Fprintf(w, "%s (%s)\nstate:    %s, %d days since last use (%s)\n", s.Name, s.Path, s.State, s.IdleDays, fmtDate(s.LastUse))
	fmt.Fprintf(w, "reads:    %d, last %s\nsearches: %d reads after a search, last %s\n", s.Use.Reads, fmtDate(s.Use.LastRead), s.Use.SearchReads, fmtDate(s.Use.LastSearchRead))
	fmt.Fprintf(w, "listed:   in %d session starts\n", s.Shown)
	if len(s.Use.Queries) > 0 {
		qs := make([]string, 0, len(s.Use.Queries))
		for q := range s.Use.Queries {
			qs = append(qs, q)
		}
		sort.Slice(qs, func(i, j int) bool {
			if s.Use.Queries[qs[i]] != s.Use.Queries[qs[j]] {
				return s.Use.Queries[qs[i]] > s.Use.Queries[qs[j]]
			}
			return qs[i] < qs[j]
		})
		fmt.Fprintln(w, "queries:")
		for _, q := range qs {
			fmt.Fprintf(w, "  %3d  %s\n", s.Use.Queries[q], q)
		}
	}
}

// waiting is "1 proposal waits", "3 proposals wait".
func waiting(n int) string {
	if n == 1 {
		return "1 proposal waits"
	}
	return plural(n, "proposal", "proposals") + " wait"
}
