package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

func init() { register("memory", newMemoryCmd) }

// memoryOptions are the flags of 'nexus memory ...'.
type memoryOptions struct {
	target string
	old    string
	raw    bool
}

func newMemoryCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "Add, replace, remove and show an agent's bounded memory (MEMORY.md, USER.md)",
		Long: `Each agent has two small files pasted into its prompt at every session
start: MEMORY.md (its own notes, 2,200 chars by default) and USER.md (what it
knows about the user, 1,375 chars). Entries are separated by a line holding
only §, exactly as Hermes Agent writes them. Limits count Unicode code
points and are set in .nexus/config.yaml.

Every add and replace is security-scanned (prompt injection, secrets,
exfiltration commands, invisible Unicode). A refused operation exits 1 and
prints why; with --json the result also lists the current entries so they
can be consolidated. With review.write_approval in the config, writes wait
in review/pending/ for a person.

Examples:
  nexus --agent lyra memory add "Staging SSH is on port 2222"
  nexus --agent lyra memory add --target user "User prefers concise answers"
  nexus --agent lyra memory replace --old "port 2222" "Staging SSH moved to 2200"
  nexus --agent lyra memory remove --old "Staging"
  nexus --agent lyra memory show --target user`,
	}
	opts := &memoryOptions{}
	addTarget := func(c *cobra.Command) {
		c.Flags().StringVar(&opts.target, "target", "memory", `which file: "memory" (MEMORY.md) or "user" (USER.md)`)
	}
	addOld := func(c *cobra.Command) {
		c.Flags().StringVar(&opts.old, "old", "", "a case-sensitive substring naming exactly one entry")
		c.Flags().StringVar(&opts.old, "old-text", "", "same as --old")
	}
	add := &cobra.Command{
		Use:   "add TEXT... | -",
		Short: "Add an entry (TEXT, or - to read it from stdin)",
		Long: `Add an entry to MEMORY.md (or USER.md with --target user). The text is
trimmed; it may span lines. Adding an entry that already exists succeeds and
changes nothing. An entry that would take the file past its limit
(MEMORY.md 2,200 and USER.md 1,375 characters by default, any script
counting one per character; memory_char_limit and user_char_limit in
.nexus/config.yaml) is refused: consolidate with replace/remove first, or
keep the detail as a fact ('nexus fact write') and add a one-line pointer.
Several words are joined with spaces, as if quoted; '-' reads the text
from stdin.

Example:
  nexus --agent lyra memory add "Deploys go through 'make deploy'; never on Fridays"
  printf 'line one\nline two\n' | nexus --agent lyra memory add -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runMemoryAdd(g, opts, args) },
	}
	replace := &cobra.Command{
		Use:   "replace --old TEXT NEWTEXT... | -",
		Short: "Replace the one entry containing --old with NEWTEXT (- reads stdin)",
		Long: `Replace the entry that contains the --old text (case-sensitive; it must
match exactly one distinct entry) with NEWTEXT. No match, or several
different matches, is refused and lists the candidates.

Example:
  nexus --agent lyra memory replace --old "port 2222" "Staging SSH is on 2222"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runMemoryReplace(g, opts, args) },
	}
	remove := &cobra.Command{
		Use:   "remove --old TEXT | remove TEXT",
		Short: "Remove the one entry containing --old",
		Long: `Remove the entry that contains the --old text (case-sensitive; it must
match exactly one distinct entry); the text may also be given as the
argument. An entry shown as [BLOCKED: ...] is removed by the #id in its
line.

Example:
  nexus --agent lyra memory remove --old "Staging"
  nexus --agent lyra memory remove --old "#1a2b3c4d"`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runMemoryRemove(g, opts, args) },
	}
	show := &cobra.Command{
		Use:   "show",
		Short: "Show a memory file's entries and usage",
		Long: `Show MEMORY.md (or USER.md with --target user) as the session-start render
shows it: usage, then the entries separated by §. Entries that fail the
security scan appear as [BLOCKED: ...] lines; --raw shows their text.

Example:
  nexus --agent lyra memory show
  nexus --agent lyra --json memory show --target user`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMemoryShow(g, opts)
		},
	}
	for _, c := range []*cobra.Command{add, replace, remove, show} {
		addTarget(c)
	}
	for _, c := range []*cobra.Command{replace, remove} {
		addOld(c)
	}
	show.Flags().BoolVar(&opts.raw, "raw", false, "show entries that fail the security scan as they are on disk")
	cmd.AddCommand(add, replace, remove, show)
	return cmd
}

// runMemoryAdd adds the words of args (or stdin for "-") as an entry.
func runMemoryAdd(g *globals, opts *memoryOptions, args []string) error {
	text, err := g.textArgs(args, "the entry")
	if err != nil {
		return err
	}
	return runMemoryWrite(g, opts, agents.Op{Action: agents.ActionAdd, Content: text})
}

// runMemoryReplace replaces the one entry holding --old with the words of
// args.
func runMemoryReplace(g *globals, opts *memoryOptions, args []string) error {
	text, err := g.textArgs(args, "the new entry")
	if err != nil {
		return err
	}
	return runMemoryWrite(g, opts, agents.Op{Action: agents.ActionReplace, Content: text, OldText: opts.old})
}

// runMemoryRemove removes the one entry holding --old (or args[0]).
func runMemoryRemove(g *globals, opts *memoryOptions, args []string) error {
	old := opts.old
	if len(args) == 1 {
		if old != "" {
			return usagef("give the entry to remove once: --old TEXT or TEXT")
		}
		old = args[0]
	}
	return runMemoryWrite(g, opts, agents.Op{Action: agents.ActionRemove, OldText: old})
}

// openMemoryFile resolves --agent and --target and opens the file.
func openMemoryFile(g *globals, opts *memoryOptions) (*vault.Vault, *agents.Memory, error) {
	t, err := agents.ParseTarget(opts.target)
	if err != nil {
		return nil, nil, err
	}
	agent, err := g.agentName()
	if err != nil {
		return nil, nil, err
	}
	v, err := g.openVault()
	if err != nil {
		return nil, nil, err
	}
	m, err := agents.OpenMemory(v, agent, t, agents.WithClock(g.now))
	return v, m, err
}

func runMemoryWrite(g *globals, opts *memoryOptions, op agents.Op) error {
	v, m, err := openMemoryFile(g, opts)
	if err != nil {
		return err
	}
	res, err := retention.WriteMemory(v, m.Agent(), m.Target(), []agents.Op{op}, retention.Provenance{Source: "cli"}, g.now())
	return g.emit(res, err, func(w io.Writer) {
		if err != nil {
			// The error itself goes to stderr; show what to consolidate.
			switch {
			case len(res.Matches) > 0:
				fmt.Fprintln(w, "Matching entries:")
				printMemoryEntries(w, res.Matches)
			case len(res.CurrentEntries) > 0:
				fmt.Fprintf(w, "%s now (%s):\n", m.Target().File(), res.Usage)
				printMemoryEntries(w, res.CurrentEntries)
			}
			if res.CuratorNotice != "" {
				fmt.Fprintln(w, res.CuratorNotice)
			}
			return
		}
		fmt.Fprintf(w, "%s\n%s: %s, %d %s\n", res.Message, m.Target().File(), res.Usage, res.EntryCount, memoryPlural(res.EntryCount, "entry", "entries"))
		if res.CuratorNotice != "" {
			fmt.Fprintln(w, res.CuratorNotice)
		}
	})
}

func runMemoryShow(g *globals, opts *memoryOptions) error {
	_, m, err := openMemoryFile(g, opts)
	if err != nil {
		return err
	}
	res, err := m.Show()
	if err == nil && opts.raw {
		res.Entries, err = m.Entries()
	}
	if err != nil {
		return err
	}
	res.Message = ""
	res.CuratorNotice = agents.CuratorNotice(m.Vault(), m.Agent(), m.Target(), res.Chars, res.Limit)
	return g.emit(res, nil, func(w io.Writer) {
		if res.CuratorNotice != "" {
			defer fmt.Fprintf(w, "\n%s\n", res.CuratorNotice)
		}
		if res.EntryCount == 0 {
			fmt.Fprintf(w, "%s is empty (%s).\n", m.Path(), res.Usage)
			return
		}
		fmt.Fprintf(w, "%s — %s, %d %s\n\n%s\n", m.Path(), res.Usage, res.EntryCount, memoryPlural(res.EntryCount, "entry", "entries"), agents.FormatEntries(res.Entries))
	})
}

// printMemoryEntries lists entries one per item, continuation lines indented.
func printMemoryEntries(w io.Writer, entries []string) {
	for i, e := range entries {
		fmt.Fprintf(w, "%3d. %s\n", i+1, strings.ReplaceAll(e, "\n", "\n     "))
	}
}

func memoryPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
